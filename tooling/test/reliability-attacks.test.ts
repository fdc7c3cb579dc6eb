import { randomBytes, randomUUID } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import {
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {} from '@slivingdoc/testkit/rgw-global-setup';
import { providedS3 } from '@slivingdoc/testkit/s3-env';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type CliRun, peakMemoryMiB, requireBuiltCli, runCli } from '../reliability/cli';

// The attack suite (contract §3 scrubbing, §4 path security and limits): real
// `slivingdoc` processes against hostile directories and planted secrets.

beforeAll(() => requireBuiltCli());

interface Sandbox {
  root: string;
  outside: string;
  env: Record<string, string>;
  cli(args: string[], extra?: Record<string, string>): Promise<CliRun>;
  dir(name: string): Promise<string>;
}

async function sandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-attack-'));
  const outside = join(root, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'outside secret\n');
  const env = {
    HOME: join(root, 'home'),
    SLIVINGDOC_STORE_DIR: join(root, 'store'),
    SLIVINGDOC_PRIVATE_ROOT: join(root, 'private'),
    SLIVINGDOC_WORKSPACE_ROOT: join(root, 'ws'),
    LOG_LEVEL: 'debug',
  };
  await mkdir(join(root, 'ws'));
  return {
    root,
    outside,
    env,
    cli: (args, extra = {}) => runCli(args, { ...env, ...extra }),
    async dir(name) {
      const d = join(root, 'ws', name);
      await mkdir(d, { recursive: true });
      return d;
    },
  };
}

const head = (run: CliRun) => run.stdout.split('\n')[0] ?? '';
async function ok(run: Promise<CliRun>): Promise<CliRun> {
  const r = await run;
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  return r;
}
async function snapshot(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const parts = await Promise.all(
    entries.map(async (e) => {
      const full = join(e.parentPath, e.name);
      return `${full}:${e.isFile() ? await readFile(full, 'utf8') : e.isSymbolicLink() ? 'link' : 'dir'}`;
    }),
  );
  return parts.sort().join('\n');
}

describe('secrets never leak', () => {
  const keyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secret = randomBytes(30).toString('base64url');
  const userInfo = `agent:${randomBytes(12).toString('hex')}`;
  const planted = [keyId, secret, userInfo.split(':')[1] as string];

  function expectClean(run: CliRun, extra: string[] = []) {
    for (const value of [...planted, ...extra]) {
      expect(run.stdout).not.toContain(value);
      expect(run.stderr).not.toContain(value);
    }
  }

  it('a refused endpoint with user info is not echoed', async () => {
    const s = await sandbox();
    const dir = await s.dir('a');
    const run = await s.cli(
      ['pull', dir, '--bucket', 'b', '--endpoint', `http://${userInfo}@127.0.0.1:9`],
      {
        AWS_ACCESS_KEY_ID: keyId,
        AWS_SECRET_ACCESS_KEY: secret,
      },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expectClean(run);
  }, 60_000);

  it('credentials the real S3 server refuses appear in no output, log record or report', async () => {
    const s = await sandbox();
    const dir = await s.dir('a');
    const s3 = providedS3(inject('s3'));
    const run = await s.cli(['pull', dir], {
      SLIVINGDOC_BUCKET: s3.bucket,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ACCESS_KEY_ID: keyId,
      AWS_SECRET_ACCESS_KEY: secret,
      AWS_SESSION_TOKEN: secret,
      AWS_REGION: 'us-east-1',
    });
    expect(run.code).not.toBe(0);
    expectClean(run);
  }, 60_000);

  it('an unreachable store (failing causes from the network stack) leaks no secret nor private root in the report', async () => {
    const s = await sandbox();
    const dir = await s.dir('a');
    const run = await s.cli(['pull', dir], {
      SLIVINGDOC_BUCKET: 'b',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9',
      AWS_ACCESS_KEY_ID: keyId,
      AWS_SECRET_ACCESS_KEY: secret,
      AWS_REGION: 'us-east-1',
    });
    expect(run.code).not.toBe(0);
    expectClean(run);
    expect(run.stdout).not.toContain(s.env.SLIVINGDOC_PRIVATE_ROOT);
  }, 60_000);

  it('an embedded-store failure (unwritable private root) reports no secret and no private path', async () => {
    const s = await sandbox();
    const dir = await s.dir('a');
    // A file where the private root's directory must be: P cannot be created.
    await writeFile(s.env.SLIVINGDOC_PRIVATE_ROOT as string, 'not a directory');
    const run = await s.cli(['pull', dir], {
      AWS_ACCESS_KEY_ID: keyId,
      AWS_SECRET_ACCESS_KEY: secret,
    });
    expect(run.code).not.toBe(0);
    expectClean(run);
    expect(run.stdout).not.toContain(s.env.SLIVINGDOC_PRIVATE_ROOT);
  }, 60_000);
});

describe('path escapes', () => {
  it('a symlink inside L is refused (SYMLINK) and its target is never published', async () => {
    const s = await sandbox();
    const dir = await s.dir('a');
    await ok(s.cli(['pull', dir]));
    await symlink(join(s.outside, 'secret.txt'), join(dir, 'leak.md'));
    await writeFile(join(dir, 'fine.md'), 'fine\n');
    const run = await s.cli(['commit', dir, '-m', 'leak']);
    expect(run.code).toBe(1);
    expect(head(run)).toBe('INVALID_CONTENT · UNSUPPORTED_FILES');
    expect(run.stdout).toContain('file: leak.md · SYMLINK');
    const witness = await s.dir('witness');
    await ok(s.cli(['pull', witness]));
    expect(existsSync(join(witness, 'leak.md'))).toBe(false);
  }, 60_000);

  it('a request path through a symlinked directory is PATH_SYMLINK and creates nothing outside', async () => {
    const s = await sandbox();
    await symlink(s.outside, join(s.root, 'ws', 'jump'));
    const before = await snapshot(s.outside);
    const run = await s.cli(['pull', join(s.root, 'ws', 'jump', 'nb')]);
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toMatch(/PATH_SYMLINK/);
    expect(await snapshot(s.outside)).toBe(before);
  }, 60_000);

  it('a hard link to a file outside the root is read as an independent file, and a pull never writes through it', async () => {
    const s = await sandbox();
    const a = await s.dir('a');
    const b = await s.dir('b');
    await ok(s.cli(['pull', a]));
    await link(join(s.outside, 'secret.txt'), join(a, 'linked.md'));
    await ok(s.cli(['commit', a, '-m', 'hard link']));
    await ok(s.cli(['pull', b]));
    await writeFile(join(b, 'linked.md'), 'rewritten remotely\n');
    await ok(s.cli(['commit', b, '-m', 'rewrite']));
    await ok(s.cli(['pull', a]));
    expect(await readFile(join(a, 'linked.md'), 'utf8')).toBe('rewritten remotely\n');
    expect(await readFile(join(s.outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  }, 90_000);

  /**
   * Swaps `dir/sub` between a real directory and a symlink to `outside` as fast as possible
   * until `done` settles: the race a scan or a materialisation must never lose.
   */
  async function raceSwaps(dir: string, outside: string, done: Promise<unknown>): Promise<number> {
    let finished = false;
    void done.finally(() => {
      finished = true;
    });
    const sub = join(dir, 'sub');
    const parked = join(dir, '.parked-sub');
    let swaps = 0;
    while (!finished) {
      for (let i = 0; i < 50; i++) {
        try {
          if (lstatSync(sub).isSymbolicLink()) {
            rmSync(sub);
            if (existsSync(parked)) renameSync(parked, sub);
            else mkdirSync(sub);
          } else {
            renameSync(sub, parked);
            symlinkSync(outside, sub);
          }
          swaps += 1;
        } catch {
          // The call under test may have replaced or removed `sub` meanwhile: keep racing.
          if (!existsSync(sub)) mkdirSync(sub, { recursive: true });
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    return swaps;
  }

  it('symlink swaps raced against pull and commit never let a read or write escape the root', async () => {
    const s = await sandbox();
    const a = await s.dir('a');
    const b = await s.dir('b');
    await ok(s.cli(['pull', a]));
    await ok(s.cli(['pull', b]));
    const before = await snapshot(s.outside);
    const rounds = Number(process.env.SLIVINGDOC_RACE_ROUNDS ?? 2);
    let swaps = 0;
    for (let round = 0; round < rounds; round++) {
      // Remote change under sub/, so the pull must materialise into the raced directory.
      mkdirSync(join(b, 'sub'), { recursive: true });
      await writeFile(join(b, 'sub', `r${round}.md`), `round ${round}\n`);
      await ok(s.cli(['commit', b, '-m', `round ${round}`]));
      const pull = s.cli(['pull', a]);
      swaps += await raceSwaps(a, s.outside, pull);
      const pulled = await pull;
      expect(pulled.code === 0 || pulled.code === 1, pulled.stdout + pulled.stderr).toBe(true);
      const commit = s.cli(['commit', a, '-m', `a ${round}`]);
      swaps += await raceSwaps(a, s.outside, commit);
      await commit;
      // Restore a real directory before the next round.
      if (lstatSync(join(a, 'sub'), { throwIfNoEntry: false })?.isSymbolicLink())
        rmSync(join(a, 'sub'));
      if (existsSync(join(a, '.parked-sub'))) rmSync(join(a, '.parked-sub'), { recursive: true });
    }
    expect(swaps).toBeGreaterThan(0);
    // Nothing was written, created or removed outside the root…
    expect(await snapshot(s.outside)).toBe(before);
    // …and nothing from outside was published.
    const witness = await s.dir('witness');
    await ok(s.cli(['pull', witness]));
    const published = readdirSync(witness, { recursive: true }).map(String);
    expect(published.some((p) => p.includes('secret'))).toBe(false);
  }, 240_000);
});

describe('huge inputs', () => {
  it('a file over 64 MiB is FILE_TOO_LARGE with bounded memory, and is not published', async () => {
    const s = await sandbox();
    const dir = await s.dir('a');
    await ok(s.cli(['pull', dir]));
    // Sparse: 65 MiB on disk costs nothing, but reading it whole would cost 65 MiB of RAM.
    await writeFile(join(dir, 'huge.md'), '');
    await truncate(join(dir, 'huge.md'), 65 * 1024 * 1024);
    await writeFile(join(dir, 'small.md'), 'small\n');
    const run = await runCli(['commit', dir, '-m', 'huge'], s.env, { measureMemory: true });
    expect(run.code).toBe(1);
    expect(head(run)).toBe('INVALID_CONTENT · UNSUPPORTED_FILES');
    expect(run.stdout).toContain('file: huge.md · FILE_TOO_LARGE');
    expect(peakMemoryMiB(run)).toBeLessThan(250);
  }, 90_000);

  it('thousands of files publish correctly', async () => {
    const s = await sandbox();
    const a = await s.dir('a');
    await ok(s.cli(['pull', a]));
    const count = Number(process.env.SLIVINGDOC_MANY_FILES ?? 600);
    for (let i = 0; i < count; i++) {
      const sub = join(a, `d${i % 30}`);
      mkdirSync(sub, { recursive: true });
      await writeFile(join(sub, `f${i}.md`), `file ${i}\n`);
    }
    const run = await s.cli(['commit', a, '-m', 'many']);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`${count} files changed, ${count} insertions(+)`);
    const witness = await s.dir(`witness-${randomUUID()}`);
    await ok(s.cli(['pull', witness]));
    expect(
      await snapshot(witness).then((t) => t.split('\n').filter((l) => l.includes('.md:')).length),
    ).toBe(count);
  }, 240_000);
});
