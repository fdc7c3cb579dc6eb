/**
 * contract §12 shutdown with a tool call in flight, through the built `slivingdoc serve` over real
 * stdio: SIGINT/SIGTERM stop accepting calls, cancel the in-flight one, wait at most 30 s,
 * release the directory's lock and exit. The call is held deterministically by the engine's
 * `after-pack-upload=pause` failpoint (released by SIGUSR2), so the signal always lands while
 * the commit has uploaded its pack and not yet sent its compare-and-swap.
 */
import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAILPOINT_RESUME_SIGNAL } from '@slivingdoc/engine';
import { untilCatching } from '@slivingdoc/testkit/signal-wait';
import { until } from '@slivingdoc/testkit/until';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

/** A server whose first commit is held after its pack upload, with that commit in flight. */
async function serverWithHeldCommit() {
  const env = sandboxEnv();
  const home = realpathSync(env.HOME!);
  const ws = join(home, 'ws');
  mkdirSync(ws);
  const storeDir = join(home, 'store');
  const flags = ['--private-root', join(home, 'private'), '--store-dir', storeDir];
  const server = new RawServer(['--workspace-root', ws, ...flags], {
    ...env,
    SLIVINGDOC_FAILPOINTS: 'after-pack-upload=pause',
  });
  servers.push(server);
  server.child.stdin.on('error', () => undefined); // a write racing the exit must not throw
  await server.initialize();
  expect(
    await server.request(2, 'tools/call', { name: 'notes_pull', arguments: {} }),
  ).toMatchObject({ result: { structuredContent: { code: 'OK' } } });
  writeFileSync(join(ws, 'mine.md'), 'mine\n');
  server.send({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'notes_commit', arguments: { message: 'in flight' } },
  });
  const packs = () =>
    (readdirSync(storeDir, { recursive: true }) as string[]).filter((n) => n.endsWith('.pack'));
  await until(
    () => existsSync(storeDir) && packs().length === 1,
    'the held commit uploaded its pack',
  );
  // Held only once it waits for SIGUSR2: the pack file shows before its upload call returns.
  await untilCatching(server.child.pid!, FAILPOINT_RESUME_SIGNAL);
  const messages = () => server.records().map((r) => r.msg);
  return { server, env, ws, storeDir, flags, messages };
}

describe('shutdown with a tool call in flight', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s cancels the held commit (nothing published), accepts no new call, releases the lock and exits 0',
    async (signal) => {
      const { server, env, ws, storeDir, flags, messages } = await serverWithHeldCommit();
      server.child.kill(signal);
      await until(() => messages().includes('shutting down'), 'the server logged its shutdown');
      // Sent after shutdown began: never read, never answered.
      server.send({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'notes_pull', arguments: {} },
      });
      server.child.kill(FAILPOINT_RESUME_SIGNAL); // let the held commit run on into its cancellation
      expect(await server.exited).toEqual({ code: 0, signal: null });

      const ids = server.stdoutLines.map((line) => (JSON.parse(line) as { id?: number }).id);
      expect(ids).toEqual([1, 2]); // no envelope for the cancelled call, nothing for the new one
      const calls = server
        .records()
        .filter((r) => r.msg === 'tool call started' || r.msg === 'tool call completed');
      expect(calls.map((r) => [r.msg, r.tool, r.outcome])).toEqual([
        ['tool call started', 'notes_pull', undefined],
        ['tool call completed', 'notes_pull', 'OK'],
        ['tool call started', 'notes_commit', undefined],
        ['tool call completed', 'notes_commit', 'CANCELLED'],
      ]);
      expect(messages()).toContain('stopped');
      expect(messages()).not.toContain('in-flight calls did not finish within the shutdown budget');
      // The cancelled commit was never published: the store still has no `current`.
      expect(existsSync(join(storeDir, 'slivingdoc', 'current'))).toBe(false);
      // The lock is free and the caller's edit intact: the CLI pulls the same directory with
      // the same private state at once and reports the edit as a local addition.
      const pull = runBin(['pull', ws, ...flags], env);
      expect(pull.stderr).toBe('');
      expect(pull.stdout).toBe(`OK  generation 0  ${ws}\n0 files changed\n`);
      expect(readdirSync(ws)).toEqual(['mine.md']);
    },
  );

  it('a call that never finishes holds the exit back at most the 30 s budget; the lock is released', async () => {
    const { server, env, ws, flags, messages } = await serverWithHeldCommit();
    server.child.kill('SIGTERM'); // and the held commit is never released
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(messages()).toContain('in-flight calls did not finish within the shutdown budget');
    expect(messages()).toContain('stopped');
    expect(runBin(['pull', ws, ...flags], env).status).toBe(0);
  }, 90_000);
});
