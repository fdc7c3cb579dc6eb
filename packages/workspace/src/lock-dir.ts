/**
 * The per-user directory that holds every lock and gate socket of this user: only its owner
 * can create, bind or connect to a name inside, so no other local user can squat a lock (the
 * Linux abstract socket namespace, used before, lets any user bind any name).
 */
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** Largest socket path the kernel takes (sun_path is 108 bytes on Linux with its NUL, 104 on macOS). */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;

/** Hex digits of the key hash in a socket name: 128 bits, short enough for sun_path. */
const NAME_HEX = 32;

function uid(): number {
  return process.getuid?.() ?? 0;
}

/**
 * The lock directory: `$SLIVINGDOC_LOCK_DIR` when that variable names an absolute path, else
 * `/tmp/slivingdoc-<uid>` (`<os.tmpdir()>` on Windows). Deliberately not `TMPDIR` or
 * `XDG_RUNTIME_DIR`: two processes exclude each other only when they resolve the same
 * directory, and an MCP host, a terminal, a cron job and a test harness each hand their
 * children a different environment. Only the uid decides, so every process of one user meets
 * in one place whatever it inherited.
 */
export function lockDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.SLIVINGDOC_LOCK_DIR;
  if (chosen && isAbsolute(chosen)) return chosen;
  const base = process.platform === 'win32' ? tmpdir() : '/tmp';
  return join(base, `slivingdoc-${uid()}`);
}

/**
 * The socket path of the lock named `key` inside {@link lockDirectory}: the first 128 bits
 * of SHA-256(key) in hex, so any key fits sun_path. The single place lock and gate endpoints
 * come from. Throws `ENAMETOOLONG` when the directory itself is too long for a socket path.
 */
export function lockAddress(key: string, env: NodeJS.ProcessEnv = process.env): string {
  const name = createHash('sha256').update(key).digest('hex').slice(0, NAME_HEX);
  const path = join(lockDirectory(env), `${name}.sock`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw Object.assign(new Error('the lock directory path is too long for a socket'), {
      code: 'ENAMETOOLONG',
    });
  }
  return path;
}

/** The lock directory is not safely ours (another owner, a link, a file). */
function unsafe(why: string): Error {
  // EACCES: the catalogue's "permission denied" — an operator must look at it.
  return Object.assign(new Error(`the lock directory ${why}`), { code: 'EACCES' });
}

const verified = new Set<string>();

/**
 * Creates the lock directory (0700) if needed and proves it safe before any socket goes in:
 * a real directory (not a symlink), owned by this uid, mode 0700. A directory of ours with a
 * wider mode (a restrictive umask cannot widen it, an older release might have) is narrowed;
 * one owned by someone else, or a link, is refused with `EACCES` and never used. Checked
 * once per process unless `recheck` (the directory vanished, e.g. a temp cleaner removed it).
 */
export async function ensureLockDirectory(dir: string, recheck = false): Promise<void> {
  if (recheck) verified.delete(dir);
  if (verified.has(dir)) return;
  await mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const info = await lstat(dir);
  if (info.isSymbolicLink()) throw unsafe('is a symbolic link');
  if (!info.isDirectory()) throw unsafe('is not a directory');
  if (info.uid !== uid()) throw unsafe('belongs to another user');
  if ((info.mode & 0o777) !== 0o700) {
    await chmod(dir, 0o700);
    const again = await lstat(dir);
    if (again.isSymbolicLink() || again.uid !== uid() || (again.mode & 0o777) !== 0o700)
      throw unsafe('cannot be made private (0700)');
  }
  verified.add(dir);
}
