import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '@slivingdoc/testkit/until';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, LockTimeoutError, openPrivateState } from '../src/index';
import { lockAddress, lockDirectory } from '../src/lock';
import { tempDir } from './helpers';

const holder = fileURLToPath(new URL('./fixtures/hold-lock.ts', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));
let root: { path: string; cleanup: () => Promise<void> };
const children: ChildProcess[] = [];

beforeEach(async () => {
  root = await tempDir('ws-lock-');
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await root.cleanup();
});

// The kernel lock is keyed by L's path, machine-wide: every test uses L paths of its own.
const nb = (name = 'notebook') => join(root.path, name);
const open = (notebookDir = nb()) =>
  openPrivateState({
    privateRoot: join(root.path, 'private'),
    notebookDir,
    storageIdentity: 'test-store',
  });

/** Starts a real child process (the package's own code through tsx) that takes the lock. */
function startHolder(notebookDir: string): { child: ChildProcess; said: () => string } {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@slivingdoc/source',
      '--import',
      'tsx',
      holder,
      join(root.path, 'private'),
      notebookDir,
    ],
    { cwd: packageDir, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    out += chunk;
  });
  return { child, said: () => out };
}

async function untilLocked(holderProcess: { child: ChildProcess; said: () => string }) {
  const { child, said } = holderProcess;
  await until(() => {
    if (child.exitCode !== null) throw new Error('lock holder exited before locking');
    return said().includes('locked');
  }, 'the lock holder said it holds the lock');
}

describe('PrivateState.lock', () => {
  it('serialises calls for one L inside the process, in order', async () => {
    const p = await open();
    const order: string[] = [];
    const release1 = await p.lock({ timeoutMs: 5_000 });
    const second = p.lock({ timeoutMs: 5_000 }).then((release) => {
      order.push('second');
      return release;
    });
    const third = p.lock({ timeoutMs: 5_000 }).then((release) => {
      order.push('third');
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual([]);
    order.push('first released');
    await release1();
    await (await second)();
    await (await third)();
    expect(order).toEqual(['first released', 'second', 'third']);
  });

  it('times out with PATH_BUSY · LOCK_TIMEOUT while held in-process, and recovers after', async () => {
    const p = await open();
    const release = await p.lock({ timeoutMs: 1_000 });
    const error = await p.lock({ timeoutMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ code: 'PATH_BUSY', reason: 'LOCK_TIMEOUT' });
    await release();
    await (await p.lock({ timeoutMs: 1_000 }))();
  });

  it('lets different notebook directories lock independently', async () => {
    const a = await (await open(nb('a'))).lock({ timeoutMs: 1_000 });
    const b = await (await open(nb('b'))).lock({ timeoutMs: 1_000 });
    await a();
    await b();
  });

  it('stops waiting when the signal aborts', async () => {
    const p = await open();
    const release = await p.lock({ timeoutMs: 1_000 });
    const controller = new AbortController();
    const waiting = p.lock({ timeoutMs: 10_000, signal: controller.signal });
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    await release();
  });

  it('excludes another process, and a holder killed with SIGKILL leaves no stuck lock', async () => {
    const first = startHolder(nb());
    await untilLocked(first);
    const p = await open();
    await expect(p.lock({ timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const release = await p.lock({ timeoutMs: 5_000 });
    // And the other way round: our hold keeps a new process out until we release.
    const second = startHolder(nb());
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(second.said()).toBe('');
    await release();
    await untilLocked(second);
    expect(second.said()).toBe('locked\n');
  });

  it('keeps a waiter connected to the holder without polling, and hands over on release', async () => {
    // Stands in for another process holding the lock: the same socket, counting the
    // connections waiters open to learn of its release.
    const key = `poll-test ${root.path}`;
    const address = lockAddress(key);
    await mkdir(lockDirectory(), { recursive: true, mode: 0o700 });
    const accepted: Socket[] = [];
    const open = new Set<Socket>();
    const holderServer = createServer((socket) => {
      accepted.push(socket);
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => holderServer.listen({ path: address }, resolve));

    const firstConnection = once(holderServer, 'connection');
    const waiter = acquireLock(key, { timeoutMs: 60_000 });
    await firstConnection;
    // A waiter whose connect completes only after its first short pause (a loaded machine)
    // drops that connection and connects again, so the wait is judged on a second of quiet:
    // one connection held open for a whole second, none opened meanwhile. Polling every
    // 100 ms (its timers fire before this second's, on the same event loop) never gives one.
    let quiet = false;
    for (let second = 0; second < 20 && !quiet; second += 1) {
      const opened = accepted.length;
      const held = accepted.at(-1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      quiet = held !== undefined && open.has(held) && accepted.length === opened;
    }
    expect(quiet, 'a second with one connection held and none opened').toBe(true);
    expect(open.size).toBe(1);

    await new Promise<void>((resolve) => {
      holderServer.close(() => resolve());
      for (const socket of accepted) socket.destroy();
    });
    const release = await waiter;
    await release();
  }, 60_000);
});
