import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { type RawServer, startNotebookServer } from './helpers/raw-server';
import { realS3Env } from './helpers/real-s3';

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

/** A started server with its notebook directory, killed after the test. */
async function startServer(env: NodeJS.ProcessEnv) {
  const started = await startNotebookServer(env);
  servers.push(started.server);
  return started;
}

/**
 * Two servers and a human with the CLI share one notebook through the store named by `env`:
 * edits travel A → B by commit and pull, and a human commit in between reaches A.
 */
async function exchange(env: NodeJS.ProcessEnv) {
  const a = await startServer(env);
  const b = await startServer(env);
  expect((await a.call('notes_pull', {})).structuredContent).toMatchObject({
    code: 'OK',
    generation: 0,
  });
  expect((await b.call('notes_pull', {})).structuredContent).toMatchObject({ code: 'OK' });

  writeFileSync(join(a.notebookDir, 'from-a.md'), 'written by A\n');
  expect((await a.call('notes_commit', { message: 'A writes' })).structuredContent).toMatchObject({
    code: 'OK',
    generation: 1,
    files: [{ path: 'from-a.md', insertions: 1, deletions: 0 }],
  });
  expect((await b.call('notes_pull', {})).structuredContent).toMatchObject({
    code: 'OK',
    generation: 1,
    files: [{ path: 'from-a.md', insertions: 1, deletions: 0 }],
  });
  expect(readFileSync(join(b.notebookDir, 'from-a.md'), 'utf8')).toBe('written by A\n');

  // A human commits with the CLI in between; both servers pick it up.
  const human = join(realpathSync(mkdtempSync(join(tmpdir(), 'slivingdoc-test-human-'))), 'nb');
  expect(runBin(['pull', human], env).status).toBe(0);
  writeFileSync(join(human, 'from-human.md'), 'one\ntwo\n');
  const commit = runBin(['commit', human, '-m', 'human edit'], env);
  expect(commit.stdout).toBe(
    `OK  generation 2  ${human}\n  from-human.md  +2\n1 file changed, 2 insertions(+)\n`,
  );

  writeFileSync(join(b.notebookDir, 'from-b.md'), 'written by B\n');
  expect((await b.call('notes_commit', { message: 'B writes' })).structuredContent).toMatchObject({
    code: 'OK',
    generation: 3,
  });
  const pulled = (await a.call('notes_pull', {})).structuredContent;
  expect(pulled).toMatchObject({ code: 'OK', generation: 3 });
  expect((pulled.files as { path: string }[]).map((f) => f.path)).toEqual([
    'from-b.md',
    'from-human.md',
  ]);
  expect(readFileSync(join(a.notebookDir, 'from-human.md'), 'utf8')).toBe('one\ntwo\n');
}

describe('servers and the CLI exchange edits', () => {
  it('on one embedded store', async () => {
    await exchange(sandboxEnv({ SLIVINGDOC_PREFIX: `t-${randomUUID()}` }));
  });

  it('on the real S3 server', async () => {
    await exchange(sandboxEnv(await realS3Env()));
  });
});
