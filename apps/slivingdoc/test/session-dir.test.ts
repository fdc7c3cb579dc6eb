import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, sandboxEnv } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

// `serve` without --workspace-root: the session directory it creates goes at exit unless
// it holds unpublished edits (docs/hosts.md, "Session directories").

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

async function session(env = sandboxEnv()) {
  const server = new RawServer([], env);
  servers.push(server);
  const init = await server.initialize();
  const instructions = (init.result as { instructions: string }).instructions;
  const notebookDir = /^The notebook directory is (\/\S+\/notebook)\. /.exec(instructions)?.[1];
  if (notebookDir === undefined) throw new Error(`no notebook directory in ${instructions}`);
  let id = 10;
  const call = async (name: string, args: object = {}) => {
    const answer = await server.request(++id, 'tools/call', { name, arguments: args });
    return (answer.result as { structuredContent: { code: string } }).structuredContent;
  };
  return { server, notebookDir, sessionDir: dirname(notebookDir), call, env };
}

type Stop = 'stdin closed' | 'SIGTERM' | 'SIGINT';
async function stop(server: RawServer, how: Stop) {
  if (how === 'stdin closed') server.child.stdin.end();
  else server.child.kill(how);
  expect(await server.exited).toEqual({ code: 0, signal: null });
}

const kept = (server: RawServer) =>
  server.records().filter((r) => r.msg === 'session directory kept: it holds unpublished edits');

describe.each<Stop>(['stdin closed', 'SIGTERM', 'SIGINT'])('the session directory, %s', (how) => {
  it('is removed, private state included, when nothing is unpublished', async () => {
    const { server, sessionDir, call } = await session();
    expect(readdirSync(sessionDir).sort()).toEqual(['notebook', 'private']);
    expect((await call('notes_pull')).code).toBe('OK');
    await stop(server, how);
    expect(existsSync(sessionDir)).toBe(false);
    expect(kept(server)).toEqual([]);
  });

  it('is kept, and its path logged at warn, when it holds an unpublished edit', async () => {
    const { server, notebookDir, sessionDir, call } = await session();
    expect((await call('notes_pull')).code).toBe('OK');
    writeFileSync(join(notebookDir, 'draft.md'), 'not committed\n');
    await stop(server, how);
    expect(existsSync(join(notebookDir, 'draft.md'))).toBe(true);
    expect(existsSync(join(sessionDir, 'private'))).toBe(true);
    expect(kept(server)).toEqual([
      expect.objectContaining({ level: 'warn', module: 'app', sessionDir, notebookDir }),
    ]);
  });
});

describe('the session directory, other cases', () => {
  it('goes after a host health check (initialize, then stdin closed)', async () => {
    const { server, sessionDir } = await session();
    await stop(server, 'stdin closed');
    expect(existsSync(sessionDir)).toBe(false);
  });

  it('goes once the edits are committed', async () => {
    const { server, notebookDir, sessionDir, call } = await session();
    await call('notes_pull');
    writeFileSync(join(notebookDir, 'note.md'), 'published\n');
    expect((await call('notes_commit', { message: 'add note' })).code).toBe('OK');
    await stop(server, 'SIGTERM');
    expect(existsSync(sessionDir)).toBe(false);
  });

  it('is kept when files were written but never pulled or committed', async () => {
    const { server, notebookDir, sessionDir } = await session();
    writeFileSync(join(notebookDir, 'loose.md'), 'never pulled\n');
    await stop(server, 'stdin closed');
    expect(existsSync(join(notebookDir, 'loose.md'))).toBe(true);
    expect(kept(server)).toHaveLength(1);
    expect(existsSync(sessionDir)).toBe(true);
  });

  it('is kept when a pulled subdirectory holds an unpublished edit', async () => {
    const { server, notebookDir, call } = await session();
    expect((await call('notes_pull', { path: join(notebookDir, 'team') })).code).toBe('OK');
    writeFileSync(join(notebookDir, 'team', 'draft.md'), 'draft\n');
    await stop(server, 'SIGTERM');
    expect(existsSync(join(notebookDir, 'team', 'draft.md'))).toBe(true);
    expect(kept(server)).toHaveLength(1);
  });

  it('is removed when the store refuses start-up', async () => {
    const env = sandboxEnv();
    // A file where the embedded store's directory must be: the store cannot start.
    writeFileSync(join(env.HOME as string, 'store-file'), '');
    const server = new RawServer(['--store-dir', join(env.HOME as string, 'store-file')], env);
    servers.push(server);
    const { code } = await server.exited;
    expect(code).not.toBe(0);
    expect(server.stdoutLines).toEqual([]);
    const tmp = readdirSync(env.TMPDIR as string).filter((name) => name.startsWith('slivingdoc-'));
    expect(tmp.filter((name) => !name.startsWith('slivingdoc-test-home'))).toEqual([]);
  });
});
