import { link, unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockTimeoutError } from './errors';
import { ensureLockDirectory, lockAddress } from './lock-dir';
import { takeOver } from './lock-takeover';

export { lockAddress, lockDirectory } from './lock-dir';

/** Releases a lock; idempotent. */
export type Release = () => Promise<void>;

/** Options of a lock acquisition. */
export interface LockOptions {
  /** How long to wait for other holders (in-process and other processes) in total. */
  timeoutMs: number;
  signal?: AbortSignal;
}

// In-process queue per key: the tail promise every new caller waits behind.
const queues = new Map<string, Promise<void>>();

/**
 * Serialises calls for `key` inside this process (FIFO), then across processes.
 *
 * The cross-process lock is a Unix socket listening at {@link lockAddress}(key), in a
 * directory only this user can enter ({@link lockDirectory}, 0700, verified before use): bind
 * is exclusive, and no other local user can bind, squat or even connect to the name. While
 * its holder lives, a connection is accepted; once it dies (SIGKILL included) the kernel
 * closes the socket and connections are refused, so a dead holder is recognised without a
 * liveness guess. Its socket file stays, and is removed only under a takeover mutex after a
 * second check (see `lock-takeover.ts`), so two waiters never both take over. A holder that
 * releases removes its own file before it stops listening (nobody else can have replaced
 * it). Throws {@link LockTimeoutError} after `timeoutMs`, or the signal's reason when aborted;
 * a lock directory that is not safely ours fails with `EACCES`.
 */
export async function acquireLock(key: string, opts: LockOptions): Promise<Release> {
  const deadline = Date.now() + opts.timeoutMs;
  const releaseLocal = await acquireLocal(key, deadline, opts.signal);
  let server: HeldName;
  try {
    server = await acquireSystem(lockAddress(key), deadline, opts.signal);
  } catch (error) {
    releaseLocal();
    throw error;
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    await server.release();
    releaseLocal();
  };
}

async function acquireLocal(
  key: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<() => void> {
  const previous = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  queues.set(key, tail);
  const done = () => {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  };
  try {
    await waitUntil(previous, deadline, signal);
  } catch (error) {
    // Later callers then wait only for `previous`, not for us.
    done();
    throw error;
  }
  return done;
}

async function waitUntil(promise: Promise<void>, deadline: number, signal?: AbortSignal) {
  signal?.throwIfAborted();
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const timer = sleep(Math.max(0, deadline - Date.now()), 'timeout' as const, {
      signal: controller.signal,
    }).catch(() => 'aborted' as const);
    const outcome = await Promise.race([promise.then(() => 'ready' as const), timer]);
    if (outcome === 'timeout') throw new LockTimeoutError();
    if (outcome === 'aborted') signal?.throwIfAborted();
  } finally {
    controller.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}

async function acquireSystem(
  address: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<HeldName> {
  await ensureLockDirectory(dirname(address));
  let pause = 5;
  for (;;) {
    signal?.throwIfAborted();
    const server = await listen(address).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      await ensureLockDirectory(dirname(address), true);
      return listen(address);
    });
    if (server) return server;
    if (Date.now() >= deadline) throw new LockTimeoutError();
    const outcome = await untilReleased(address, { pauseMs: pause, deadline }, signal);
    signal?.throwIfAborted();
    if (outcome === 'stale') {
      const taken = await takeOver(address, () => listen(address));
      if (taken) return taken;
      // Another waiter is taking over (or just did): give it a moment.
      await sleep(pause, undefined, signal ? { signal } : undefined);
    }
    pause = Math.min(pause * 2, 100);
  }
}

/** A name this process listens on: the lock, held until {@link HeldName.release}. */
interface HeldName {
  release(): Promise<void>;
}

/** Distinguishes this process's temporary socket names (see {@link listen}). */
let bindCounter = 0;

/**
 * Listens on `address`; `undefined` when another process holds it. Waiters stay connected
 * (see {@link untilReleased}); the release stops listening first, so the name is free when
 * their connections drop.
 *
 * The socket is bound and listening under a temporary name in the same directory first, and
 * only then hard-linked to `address` (link(2) is atomic and fails with EEXIST when the name
 * is taken, so it is as exclusive as bind). Binding `address` directly left a moment between
 * bind(2) and listen(2) in which the file existed but refused connections, exactly as a dead
 * holder's does: a waiter that looked then (a holder descheduled or in a GC pause there, on a
 * loaded machine) took the live holder's file for stale, removed it and took the lock too
 * (seen as DOUBLE in lock-directory.test.ts's takeover race). Now a file at `address`
 * refuses connections only when its holder is dead. A process killed between the two steps
 * leaves a temporary name (`.bind-<pid>-<n>`, a few bytes) in the lock directory.
 */
async function listen(address: string): Promise<HeldName | undefined> {
  bindCounter += 1;
  const temporary = join(dirname(address), `.bind-${process.pid}-${bindCounter}`);
  const waiters = new Set<Socket>();
  const server: Server = createServer((socket) => {
    socket.unref();
    socket.on('error', () => {});
    waiters.add(socket);
    socket.once('close', () => waiters.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ path: temporary, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.unref();
  const stop = () =>
    new Promise<void>((done) => {
      server.close(() => done());
      for (const socket of waiters) socket.destroy();
    });
  try {
    await link(temporary, address);
  } catch (error) {
    await stop();
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  } finally {
    // The socket stays reachable through `address`; libuv's unlink at close then finds
    // nothing under the temporary name.
    await unlink(temporary).catch(() => undefined);
  }
  return {
    release: async () => {
      // Nobody else removes a listening holder's file, so `address` still names ours.
      await unlink(address).catch(() => undefined);
      await stop();
    },
  };
}

/** What a wait on the holder's socket ended with. */
type WaitOutcome = 'released' | 'stale' | 'absent';

/**
 * Waits for the holder of `address` to let go, at most until `deadline`. The waiter connects to
 * the holder's listening socket, and that connection closes the moment the holder releases or
 * dies, so the lock passes on at once instead of after a sleep. While connected the waiter
 * does nothing else: reconnecting every 100 ms, as it once did, made 99 waiters open ~1,000
 * connections a second beside the holder. A refused connection means the holder is dead and
 * its socket file stale; a missing file means it was just released; both end the wait at
 * once. Any other failure falls back to a plain sleep of `pauseMs`.
 */
function untilReleased(
  address: string,
  wait: { pauseMs: number; deadline: number },
  signal?: AbortSignal,
): Promise<WaitOutcome> {
  return new Promise((resolve) => {
    const socket = connect(address);
    let connected = false;
    const done = (outcome: WaitOutcome = 'released') => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const onAbort = () => done();
    const remaining = () => Math.max(1, wait.deadline - Date.now());
    let timer = setTimeout(done, Math.min(wait.pauseMs, remaining()));
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') done('stale');
      else if (err.code === 'ENOENT') done('absent');
    });
    socket.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      timer = setTimeout(done, remaining());
    });
    socket.once('close', () => {
      if (connected) done();
    });
  });
}
