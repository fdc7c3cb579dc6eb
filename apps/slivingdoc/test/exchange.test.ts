import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialsOf, freshBucket, requireS3 } from '@slivingdoc/testkit/s3-server';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

type Structured = { structuredContent: Record<string, unknown>; isError?: boolean };

/** A started server with its notebook directory (from the instructions). */
async function startServer(env: NodeJS.ProcessEnv) {
  const server = new RawServer([], env);
  servers.push(server);
  const init = await server.initialize();
  const instructions = (init.result as { instructions: string }).instructions;
  const notebookDir = /^The notebook directory is (.+?)\. Call/.exec(instructions)![1]!;
  let id = 1;
  const call = async (name: string, args: object): Promise<Structured> =>
    (await server.request(++id, 'tools/call', { name, arguments: args })).result as Structured;
  return { server, notebookDir, call };
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
    const env = requireS3();
    const endpoint = env.SLIVINGDOC_TEST_S3_ENDPOINT;
    const credentials = credentialsOf(env);
    // The SDK's notice about its future Node support is noise in a test run.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    const bucket = await freshBucket(env);
    await exchange(
      sandboxEnv({
        SLIVINGDOC_BUCKET: bucket,
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      }),
    );
  });
});
