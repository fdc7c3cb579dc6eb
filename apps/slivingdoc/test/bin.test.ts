import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { assertBuilt, bin, runBin, sandboxEnv } from './helpers/bin';

beforeAll(assertBuilt);

/** A refusal: exit code, nothing on stdout, exactly one line on stderr. */
function expectRefusal(
  args: string[],
  env: NodeJS.ProcessEnv,
  what: string,
  reason: RegExp | string,
  code = 2,
): string {
  const run = runBin(args, env);
  expect(run.stdout).toBe('');
  expect(run.stderr.split('\n')).toHaveLength(2); // one line plus the final LF
  expect(run.stderr).toMatch(new RegExp(`^slivingdoc: ${what} — `));
  if (typeof reason === 'string') expect(run.stderr).toContain(reason);
  else expect(run.stderr).toMatch(reason);
  expect(run.status).toBe(code);
  return run.stderr;
}

describe('version and help', () => {
  it.each(['version', 'v', '--version', '-V'])(
    '%s prints the release version and reads no configuration',
    (cmd) => {
      const env = sandboxEnv({ SLIVINGDOC_COMMIT_RETRIES: 'bad', LOG_LEVEL: 'bad=bad' });
      expect(runBin([cmd], env)).toEqual({
        status: 0,
        stdout: `slivingdoc ${pkg.version}\n`,
        stderr: '',
      });
    },
  );

  it.each([['-h'], ['--help']])('%j prints help to stdout', (...args) => {
    const run = runBin(args);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Usage: slivingdoc <command> \[options\]\n/);
    for (const word of [
      'serve, s',
      'pull, p <path>',
      'commit, c <path> -m <message>',
      'status <path>',
      'log <path>',
      'revert <path> --generation N',
      '--bucket',
    ]) {
      expect(run.stdout).toContain(word);
    }
  });

  it.each([
    [['serve', '-h'], 'Usage: slivingdoc serve [options]', '--actor'],
    [['commit', 'x', '--help'], 'Usage: slivingdoc commit <path> -m <message>', '--quiet'],
    [['pull', '--help'], 'Usage: slivingdoc pull <path>', '--quiet'],
    [['status', '--help'], 'Usage: slivingdoc status <path>', '--json'],
    [['log', '-h'], 'Usage: slivingdoc log <path>', '--stat'],
    [['revert', '--help'], 'Usage: slivingdoc revert <path> --generation N', '--generation'],
  ])('%j prints that command’s own help', (args, usageLine, option) => {
    const run = runBin(args);
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout.startsWith(`${usageLine}`)).toBe(true);
    expect(run.stdout).toContain(option);
    expect(run.stdout).toContain('--bucket');
    expect(run.stdout).not.toContain('Commands:');
  });
});

describe('usage refusals exit 2 with one line', () => {
  it.each([
    [[], /no command/],
    [['sync'], /unknown command "sync"/],
    [['pull'], /pull takes exactly one path \(got 0\)/],
    [['commit', 'a', 'b', '-m', 'x'], /exactly one path \(got 2\)/],
    [['commit', 'nb'], /commit needs -m <message>/],
    [['serve', '--nope'], /unknown option --nope/],
    [['version', 'x'], /version takes no arguments/],
  ])('%j', (args, reason) => {
    expectRefusal(args, sandboxEnv(), 'usage', reason);
  });
});

describe('configuration refusals exit 2 with one line', () => {
  it.each([
    [['--bucket', 'NO'], /--bucket: "NO" is not a valid bucket name/],
    [['--prefix', '/x'], /--prefix: "\/x" starts or ends with \//],
    [['--bucket=ok-bucket', '--region', 'a b'], /--region: "a b" is not a valid region/],
    [['--bucket=ok-bucket', '--endpoint', 'ftp://h'], /--endpoint: the scheme must be http/],
    [['--bucket=ok-bucket', '--path-style', 'yes'], /--path-style: "yes" is not a boolean/],
    [['--store-dir='], /--store-dir: empty value/],
    [['--workspace-root='], /--workspace-root: empty value/],
    [['--private-root='], /--private-root: empty value/],
    [['--writable', 'a::b'], /--writable: "a::b" has an empty list item/],
    [['--read-only', '/abs'], /path sets: "\/abs" is not a notebook-relative path/],
    [['--commit-retries', '101'], /--commit-retries: "101" is not an integer 0–100/],
    [['--checkpoint-packs', '0'], /--checkpoint-packs: "0" is not an integer at least 1/],
    [['--retained-checkpoints', '65'], /--retained-checkpoints: "65" is not an integer 0–64/],
    [['--merge-additions', 'union'], /--merge-additions: "union" is not keep or conflict/],
    [['--region', 'eu-west-1'], /--region needs a bucket/],
    [['--endpoint', 'http://h'], /--endpoint needs a bucket/],
    [['--path-style', 'true'], /--path-style needs a bucket/],
  ])('serve %j', (args, reason) => {
    expectRefusal(['serve', ...args], sandboxEnv(), 'configuration', reason);
  });

  it('an entry in both path sets', () => {
    expectRefusal(
      ['serve', '--writable', 'notes', '--read-only=notes'],
      sandboxEnv(),
      'configuration',
      /"notes" is in both the writable and the read-only set/,
    );
    expectRefusal(
      ['serve'],
      sandboxEnv({ SLIVINGDOC_WRITABLE: 'a:b', SLIVINGDOC_READ_ONLY: 'b' }),
      'configuration',
      /in both/,
    );
  });

  it('a bad --merge-additions or SLIVINGDOC_MERGE_ADDITIONS on pull and commit', () => {
    const root = mkdtempSync(join(tmpdir(), 'slivingdoc-test-ws-'));
    expectRefusal(
      ['pull', root, '--merge-additions=both'],
      sandboxEnv(),
      'configuration',
      /--merge-additions: "both" is not keep or conflict/,
    );
    expectRefusal(
      ['commit', root, '-m', 'x'],
      sandboxEnv({ SLIVINGDOC_MERGE_ADDITIONS: 'KEEP' }),
      'configuration',
      /SLIVINGDOC_MERGE_ADDITIONS: "KEEP" is not keep or conflict/,
    );
  });

  it('a private root inside the workspace root', () => {
    const root = mkdtempSync(join(tmpdir(), 'slivingdoc-test-ws-'));
    expectRefusal(
      ['serve', '--workspace-root', root, '--private-root', join(root, '.private')],
      sandboxEnv(),
      'configuration',
      `the private root ${join(root, '.private')} and the workspace root ${root} overlap`,
    );
    expectRefusal(['pull', root, '--private-root', root], sandboxEnv(), 'configuration', /overlap/);
  });

  it('a private root that reaches into the workspace root through a symlink', () => {
    const base = mkdtempSync(join(tmpdir(), 'slivingdoc-test-ws-'));
    const root = join(base, 'ws');
    mkdirSync(root);
    symlinkSync(root, join(base, 'link'));
    expectRefusal(
      ['serve', '--workspace-root', root, '--private-root', join(base, 'link', 'p')],
      sandboxEnv(),
      'configuration',
      // Named as resolved: the link is what made them overlap.
      `the private root ${join(realpathSync(root), 'p')} and the workspace root ${realpathSync(root)} overlap`,
    );
  });

  it('a store directory inside the workspace root, and pull of the home directory', () => {
    const env = sandboxEnv();
    const root = mkdtempSync(join(tmpdir(), 'slivingdoc-test-ws-'));
    expectRefusal(
      ['pull', root, '--store-dir', join(root, 'store')],
      env,
      'configuration',
      `the store directory ${join(root, 'store')} and the workspace root ${root} overlap`,
    );
    expectRefusal(['pull', env.HOME!], env, 'configuration', /overlap/);
  });

  it('a workspace root that does not exist', () => {
    expectRefusal(
      ['serve', '--workspace-root', join(tmpdir(), 'slivingdoc-test-missing-dir-x9')],
      sandboxEnv(),
      'configuration',
      `the workspace root ${join(tmpdir(), 'slivingdoc-test-missing-dir-x9')} does not exist`,
    );
  });

  it('an endpoint with user info, without any secret in the line', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const keyId = 'AKIAIOSFODNN7EXAMPLE';
    const env = sandboxEnv({ AWS_ACCESS_KEY_ID: keyId, AWS_SECRET_ACCESS_KEY: secret });
    for (const endpoint of [`http://${keyId}:${secret}@127.0.0.1:9`, 'http://token@127.0.0.1:9']) {
      const line = expectRefusal(
        ['serve', '--bucket', 'notes', '--endpoint', endpoint],
        env,
        'configuration',
        /--endpoint: user info is not allowed in an endpoint/,
      );
      const viaEnv = expectRefusal(
        ['serve'],
        { ...env, SLIVINGDOC_BUCKET: 'notes', AWS_ENDPOINT_URL: endpoint },
        'configuration',
        /AWS_ENDPOINT_URL: user info/,
      );
      for (const text of [line, viaEnv]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(keyId);
        expect(text).not.toContain('token');
      }
    }
  });
});

/** A free loopback port that accepts nothing. */
function closedPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const PROBE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const probeEnv = () =>
  sandboxEnv({
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: PROBE_SECRET,
    AWS_REGION: 'us-east-1',
  });

describe('startup store diagnostics', () => {
  it('a store that stays unreachable is named so, exit 1, not INCOMPATIBLE_STORE', async () => {
    const port = await closedPort();
    const line = expectRefusal(
      ['serve', '--bucket', 'notes', '--endpoint', `http://127.0.0.1:${port}`],
      probeEnv(),
      'store unreachable',
      /the compatibility probe could not reach the store: no answer could be trusted in 8 attempts; last: create-if-absent: unreachable \(ECONNREFUSED\)$/m,
      1,
    );
    expect(line).not.toContain(PROBE_SECRET);
    expect(line).not.toContain('AKIAIOSFODNN7EXAMPLE');
  }, 60_000);

  it('a store giving a definite wrong answer refuses startup with exit 3 and no secret', async () => {
    // An S3 look-alike that accepts every PUT: the second create-if-absent "succeeds".
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { etag: '"0123456789abcdef0123456789abcdef"' });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
        (resolve) => {
          const child = spawn(
            process.execPath,
            [bin, 'serve', '--bucket', 'notes', '--endpoint', `http://127.0.0.1:${port}`],
            { env: probeEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (c: Buffer) => {
            stdout += c.toString();
          });
          child.stderr.on('data', (c: Buffer) => {
            stderr += c.toString();
          });
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        },
      );
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'slivingdoc: INCOMPATIBLE_STORE — the store failed the compatibility probe: second create-if-absent succeeded: the store ignores If-None-Match\n',
      );
      expect(run.code).toBe(3);
    } finally {
      server.close();
    }
  }, 60_000);
});
