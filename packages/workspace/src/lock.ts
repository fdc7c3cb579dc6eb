import { createHash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockTimeoutError } from './errors';

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
 * The cross-process lock is a listening Unix socket in Linux's abstract namespace, named
 * after `key`: bind(2) is exclusive, and the kernel releases the name the instant its holder
 * dies, SIGKILL included — so there is no lock file that a killed holder could leave behind
 * and no liveness guess (pid reuse) to get wrong. Limits: the abstract namespace is per
 * network namespace, so processes in different network namespaces sharing one P do not
 * exclude each other; and it exists on Linux only (elsewhere a socket file under P takes its
 * place, whose stale file is removed only after a refused connection proves nobody listens).
 * Throws {@link LockTimeoutError} after `timeoutMs`, or the signal's reason when aborted.
 */
export async function acquireLock(
  key: string,
  socketFile: string,
  opts: LockOptions,
): Promise<Release> {
  const deadline = Date.now() + opts.timeoutMs;
  const releaseLocal = await acquireLocal(key, deadline, opts.signal);
  let server: HeldName;
  try {
    server = await acquireSystem(key, socketFile, deadline, opts.signal);
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
  key: string,
  socketFile: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<HeldName> {
  const address = lockAddress(key, socketFile);
  let pause = 5;
  for (;;) {
    signal?.throwIfAborted();
    const server = await listen(address);
    if (server) return server;
    if (address === socketFile && (await removeIfAbandoned(socketFile))) continue;
    if (Date.now() >= deadline) throw new LockTimeoutError();
    await untilReleased(address, { pauseMs: pause, deadline }, signal);
    signal?.throwIfAborted();
    pause = Math.min(pause * 2, 100);
  }
}

/**
 * Where the lock named `key` listens: a name in Linux's abstract namespace (a hash of `key`),
 * elsewhere `socketFile`. Exported for tests that stand in for a holder.
 */
export function lockAddress(key: string, socketFile: string): string {
  return process.platform === 'linux'
    ? `\0slivingdoc-lock-${createHash('sha256').update(key).digest('hex')}`
    : socketFile;
}

/** A name this process listens on: the lock, held until {@link HeldName.release}. */
interface HeldName {
  release(): Promise<void>;
}

/**
 * Listens on `address`; `undefined` when another process holds it. Waiters stay connected
 * (see {@link untilReleased}); the release stops listening first, so the name is free when
 * their connections drop.
 */
function listen(address: string): Promise<HeldName | undefined> {
  return new Promise((resolve, reject) => {
    const waiters = new Set<Socket>();
    const server: Server = createServer((socket) => {
      socket.unref();
      socket.on('error', () => {});
      waiters.add(socket);
      socket.once('close', () => waiters.delete(socket));
    });
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(error);
    });
    server.listen({ path: address, exclusive: true }, () => {
      server.unref();
      resolve({
        release: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const socket of waiters) socket.destroy();
          }),
      });
    });
  });
}

/**
 * Waits for the holder of `address` to let go, at most until `deadline`. The waiter connects to
 * the holder's listening socket, and that connection closes the moment the holder releases or
 * dies, so the lock passes on at once instead of after a sleep. While connected the waiter
 * does nothing else: reconnecting every 100 ms, as it once did, made 99 waiters open ~1,000
 * connections a second beside the holder. A connection that is refused or fails falls back
 * to a plain sleep of `pauseMs`.
 */
function untilReleased(
  address: string,
  wait: { pauseMs: number; deadline: number },
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(address);
    let connected = false;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      socket.destroy();
      resolve();
    };
    const remaining = () => Math.max(1, wait.deadline - Date.now());
    let timer = setTimeout(done, Math.min(wait.pauseMs, remaining()));
    signal?.addEventListener('abort', done, { once: true });
    socket.on('error', () => {});
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

// Non-Linux only: a socket file outlives a killed holder; a refused connection proves no
// process listens on it any more. Residual risk: two waiters that both saw it abandoned can
// race (one removes the other's fresh socket file). Linux uses the abstract namespace.
async function removeIfAbandoned(socketFile: string): Promise<boolean> {
  const alive = await new Promise<boolean>((resolve) => {
    const socket = connect(socketFile);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
  if (alive) return false;
  await unlink(socketFile).catch(() => {});
  return true;
}
