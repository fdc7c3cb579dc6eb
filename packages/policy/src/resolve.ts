import { lstat, mkdir, realpath } from 'node:fs/promises';
import { posix } from 'node:path';
import { PolicyError } from './errors';
import { cleanAbsolutePath } from './request';

/** Input of {@link resolveRequestPath}. */
export interface ResolveRequestInit {
  /** The decoded request path (from `parseRequestPath`); `undefined` = the notebook directory. */
  requested?: string;
  /** The server's notebook directory (absolute, at or below the workspace root). */
  notebookDir: string;
  /** The workspace root, already resolved with `realpath` once at startup. */
  workspaceRoot: string;
  /** Directories the private root already manages (their realpaths). */
  managed: string[];
  /** Create the directory (and missing parents) when absent: pulls do, commits do not. */
  create: boolean;
}

/**
 * Resolves the directory a call addresses (contract §2/§4), first failure wins:
 * PATH_OUTSIDE_ROOT (not at or below the workspace root), PATH_SYMLINK (an existing
 * component below the root is a symlink), PATH_NOT_DIRECTORY (an existing component is not
 * a directory), NESTED_NOTEBOOK (inside or containing a managed directory other than
 * itself). With `create`, missing components are created one at a time (0755 before
 * umask). Returns the directory's identity: its `realpath` when it exists, otherwise the
 * cleaned path — equal to the future realpath, since the root is a realpath and no
 * component below it is a link. Throws {@link PolicyError}.
 */
export async function resolveRequestPath(init: ResolveRequestInit): Promise<string> {
  const root = cleanAbsolutePath(init.workspaceRoot);
  const target = cleanAbsolutePath(init.requested ?? init.notebookDir);
  const below = relativeBelow(root, target);
  if (below === undefined) throw outsideRoot(target, root);
  const missingFrom = await checkExistingComponents(root, below);
  checkNesting(target, init.managed);
  if (missingFrom === undefined) return verifiedRealpath(root, target);
  if (!init.create) return target;
  let current = posix.join(root, ...below.slice(0, missingFrom));
  for (const segment of below.slice(missingFrom)) {
    current = posix.join(current, segment);
    await mkdir(current, { mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    // Re-check what now stands there: a racer may have put a link or a file in its place.
    await checkComponent(current);
  }
  return verifiedRealpath(root, target);
}

/** The segments of `target` below `root`, or `undefined` when it is not at or below it. */
function relativeBelow(root: string, target: string): string[] | undefined {
  if (target === root) return [];
  const prefix = root === '/' ? '/' : `${root}/`;
  if (!target.startsWith(prefix)) return undefined;
  return target.slice(prefix.length).split('/');
}

/** Checks every existing component; returns the index of the first missing one, if any. */
async function checkExistingComponents(root: string, below: string[]): Promise<number | undefined> {
  await checkComponent(root);
  let current = root;
  for (const [index, segment] of below.entries()) {
    current = posix.join(current, segment);
    const exists = await checkComponent(current);
    if (!exists) return index;
  }
  return undefined;
}

/** True when `path` is an existing directory that is no symlink; false when absent. */
async function checkComponent(path: string): Promise<boolean> {
  const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    if (error.code === 'ENOTDIR') throw notDirectory(path);
    throw error;
  });
  if (!stats) return false;
  if (stats.isSymbolicLink()) throw symlink(path);
  if (!stats.isDirectory()) throw notDirectory(path);
  return true;
}

// Every refusal names the path it is about: the caller's own paths, never a private one.
function notDirectory(path: string): PolicyError {
  return new PolicyError('PATH_NOT_DIRECTORY', `${path} exists and is not a directory.`);
}

function symlink(path: string): PolicyError {
  return new PolicyError('PATH_SYMLINK', `${path} is a symbolic link; links are not followed.`);
}

function outsideRoot(path: string, root: string): PolicyError {
  return new PolicyError('PATH_OUTSIDE_ROOT', `${path} is outside the workspace root ${root}.`);
}

function checkNesting(target: string, managed: string[]): void {
  for (const other of managed) {
    const dir = cleanAbsolutePath(other);
    if (dir === target) continue;
    if (relativeBelow(dir, target) !== undefined || relativeBelow(target, dir) !== undefined) {
      throw new PolicyError(
        'NESTED_NOTEBOOK',
        `${target} is inside or contains ${dir}, another notebook directory this server manages.`,
      );
    }
  }
}

// The lstat walk and the realpath are separate calls: a component swapped for a link in
// between shows up as a realpath that differs from the checked path.
async function verifiedRealpath(root: string, target: string): Promise<string> {
  const real = await realpath(target);
  if (real !== target) throw symlink(target);
  if (relativeBelow(root, real) === undefined) throw outsideRoot(target, root);
  return real;
}
