/**
 * Taking over a lock socket file whose holder died (SIGKILL leaves the file; connecting to it
 * is refused). Removing it is the dangerous step: two waiters that both found the file stale
 * must never both remove "it", since the second would remove the first one's fresh socket
 * and both would hold the lock. So a stale file is removed only under a takeover mutex, and
 * only after the mutex holder has checked again that the path still names the same stale
 * file (same inode, connection still refused).
 *
 * The mutex for the stale inode `I` of `<name>.sock` is the symlink `<name>.sock.take-I.<k>`,
 * created with symlink(2) (atomic, EEXIST when taken), whose target records its owner as
 * `<pid>:<start time>` (the process's start time from /proc, so a reused pid is no owner).
 * A level is removed only by its own owner: one whose owner died is never removed (two
 * removers could race, the second removing a live level), the next taker moves on to level
 * k + 1 instead. Such levels are a few bytes of garbage, left only by a taker killed in the
 * middle of its takeover.
 */
import { readFileSync } from 'node:fs';
import { lstat, readlink, symlink, unlink } from 'node:fs/promises';
import { connect } from 'node:net';

/** What a connection to a lock socket path says about its holder. */
export type Liveness = 'alive' | 'stale' | 'absent';

/**
 * Connects once to `path`: a listener answers (alive), a socket file without one refuses
 * (stale), no file (absent). Anything else, a full backlog included, counts as alive.
 */
export function liveness(path: string): Promise<Liveness> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve('alive');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      if (err.code === 'ECONNREFUSED') resolve('stale');
      else if (err.code === 'ENOENT') resolve('absent');
      else resolve('alive');
    });
  });
}

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const HAS_PROC = startTime(process.pid) !== undefined;

/** This process as a mutex owner: `<pid>:<start time>` (`<pid>:0` without /proc). */
export const OWNER = `${process.pid}:${HAS_PROC ? startTime(process.pid) : '0'}`;

/** Whether the process a mutex names still runs (the same process, not a reused pid). */
export function ownerAlive(owner: string): boolean {
  const [pidText, started] = owner.split(':');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (HAS_PROC) return startTime(pid) === started;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the takeover mutex of `path`'s stale inode `ino`; `undefined` while another live
 * process holds it. The release removes this level only.
 */
async function takeMutex(path: string, ino: bigint): Promise<(() => Promise<void>) | undefined> {
  for (let level = 1; ; level += 1) {
    const name = `${path}.take-${ino}.${level}`;
    try {
      await symlink(OWNER, name);
      return () => unlink(name).catch(() => undefined);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = await readlink(name).catch(() => undefined);
    // Unreadable: removed meanwhile by the taker that succeeded; its inode is gone.
    if (owner === undefined) return undefined;
    if (ownerAlive(owner)) return undefined;
  }
}

/**
 * Removes the stale socket file at `path` when it provably still is the stale one, then
 * runs `bind` (which listens on `path`) while still holding the mutex. Returns what `bind`
 * returned, or `undefined` when someone else is taking over or the file is no longer stale.
 */
export async function takeOver<T>(
  path: string,
  bind: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const before = await lstat(path, { bigint: true }).catch(() => undefined);
  if (before === undefined) return undefined;
  const release = await takeMutex(path, before.ino);
  if (release === undefined) return undefined;
  try {
    const now = await lstat(path, { bigint: true }).catch(() => undefined);
    if (now === undefined || now.ino !== before.ino || now.dev !== before.dev) return undefined;
    if ((await liveness(path)) !== 'stale') return undefined;
    // Only a mutex holder unlinks a stale file, and a live listener never refuses: the path
    // still names the stale file we just checked.
    await unlink(path);
    return await bind();
  } finally {
    await release();
  }
}
