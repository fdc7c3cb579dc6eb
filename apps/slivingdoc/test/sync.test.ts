import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

describe('pull and commit from the shell', () => {
  it('report in the contract §12 format, share one embedded store, and meet a server', async () => {
    const env = sandboxEnv(); // one store for every process below
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'slivingdoc-test-cli-')));
    const alice = join(base, 'alice');
    const bob = join(base, 'bob');

    const first = runBin(['pull', alice], env);
    expect(first).toMatchObject({
      status: 0,
      stdout: `OK  generation 0  ${alice}\n0 files changed\n`,
    });

    writeFileSync(join(alice, 'a.md'), 'one\ntwo\n');
    const commit = runBin(['c', '-m', 'Add a', 'alice'], env, base); // relative path, flags first
    expect(commit.stdout).toBe(
      `OK  generation 1  ${alice}\n  a.md  +2\n1 file changed, 2 insertions(+)\n`,
    );
    expect(commit.status).toBe(0);

    const other = runBin(['p', bob], env);
    expect(other.stdout).toBe(
      `OK  generation 1  ${bob}\n  a.md  +2\n1 file changed, 2 insertions(+)\n`,
    );
    expect(readFileSync(join(bob, 'a.md'), 'utf8')).toBe('one\ntwo\n');

    // A server on the same store picks up the human's commit.
    const server = new RawServer([], env);
    servers.push(server);
    await server.initialize();
    const pull = await server.request(2, 'tools/call', { name: 'notes_pull', arguments: {} });
    expect(pull.result).toMatchObject({
      structuredContent: { code: 'OK', generation: 1, files: [{ path: 'a.md', insertions: 2 }] },
    });
  });

  it('a commit of a directory never pulled is NOT_PULLED, exit 1, and creates nothing', () => {
    const env = sandboxEnv();
    const missing = join(mkdtempSync(join(tmpdir(), 'slivingdoc-test-cli-')), 'never');
    const run = runBin(['commit', missing, '-m', 'x'], env);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(
      /^INVALID_REQUEST · NOT_PULLED\n.+\naction: PULL_FIRST\nretryable: false\ndiagnosticId: [0-9a-f]{16}\n$/,
    );
    expect(existsSync(missing)).toBe(false);
    // At the default level a domain error writes nothing to stderr but the report.
    expect(run.stderr).toBe('');
    // The record stays available with LOG_LEVEL.
    const logged = runBin(['commit', missing, '-m', 'x'], { ...env, LOG_LEVEL: 'warn' });
    const record = JSON.parse(logged.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(record).toMatchObject({ module: 'cli', level: 'warn', outcome: 'INVALID_REQUEST' });
    expect(logged.stdout).toContain(`diagnosticId: ${record.diagnosticId}`);
  });

  it('a path outside the configured workspace root is PATH_OUTSIDE_ROOT, exit 1', () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'slivingdoc-test-cli-')));
    const run = runBin(
      ['pull', join(base, 'elsewhere'), '--workspace-root', join(base)],
      sandboxEnv(),
    );
    expect(run.status).toBe(0); // inside: fine, and created

    const root = join(base, 'elsewhere');
    const outside = runBin(['pull', join(base, 'other'), `--workspace-root=${root}`], sandboxEnv());
    expect(outside.status).toBe(1);
    expect(outside.stdout).toMatch(/^INVALID_REQUEST · PATH_OUTSIDE_ROOT\n/);
    expect(outside.stdout).toMatch(/\naction: CHOOSE_PATH\nretryable: false\n/);
    expect(existsSync(join(base, 'other'))).toBe(false);
  });
});
