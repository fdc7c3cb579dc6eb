import { type BigIntStats, linkSync, lstatSync, renameSync, unlinkSync } from 'node:fs';
import { mkdir, rmdir, unlink } from 'node:fs/promises';
import { sortByUtf8 } from '@slivingdoc/envelope';
import { checkNotebookPath } from '@slivingdoc/policy';
import { createExclusive, fillNewFile } from './durable-write';
import { ConcurrentEditError, InvalidChangeError } from './errors';
import { concurrentEdit } from './read-file';
import { SecureDir } from './secure-dir';
import { type FileStamp, sameStamp, stampOf } from './stamp';
import { newTempName } from './temp-names';

/**
 * One file to change in L: `content` to write (or `null` to delete), and what the caller
 * expects to be there now — the stamp its scan saw, or `'absent'`.
 */
export interface FileChange {
  path: string;
  content: Uint8Array | null;
  expect: FileStamp | 'absent';
}

// Link-free file systems (some FUSE, vfat) refuse link(2); a new file then falls back to a
// checked rename.
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'EXDEV']);

/** A file {@link writeChanges} wrote: its stamp right after the write, for the stat cache. */
export interface WrittenFile {
  path: string;
  stamp: FileStamp;
}

/** Temp files written and fsynced at once: fsyncs issued together share journal commits. */
const WRITE_CONCURRENCY = 16;

/**
 * Applies `changes` to the notebook directory `dir` (contract §4): deletions first, then the
 * directories they leave empty, then writes. Each file is written as a new
 * `.slivingdoc-<uuid>.tmp` (0644 before umask, fsynced) in its own directory and then
 * renamed over the target (or hard-linked, for a target that must be absent), so a reader
 * sees the old or the new content and no existing inode is ever written into. Temp files are
 * written and fsynced concurrently (scans ignore them), then published one by one in path
 * order. Every operation goes through directories opened without following links. A target
 * that no longer matches its expectation, or a directory that became a link or a file, throws
 * {@link ConcurrentEditError}: before anything is touched when the first check finds it,
 * else with the changes before it applied (each one atomic). Touched directories are
 * fsynced before returning. Returns the stamp of every written file that still holds exactly
 * what was written when checked after publishing (a file the caller rewrote at once is left
 * out), so the caller can record it in the stat cache without reading it back. `onStaged` is
 * told after each file's content is written (the bulk of the work), for a progress display.
 */
export async function writeChanges(
  dir: string,
  changes: FileChange[],
  opts: { onStaged?: () => void } = {},
): Promise<WrittenFile[]> {
  for (const change of changes) {
    const reason = checkNotebookPath(change.path);
    if (reason) throw new InvalidChangeError(change.path, reason);
  }
  const ordered = sortByUtf8(changes, (change) => change.path);
  const tree = new DirTree(await SecureDir.open(dir));
  try {
    await checkExpectations(tree, ordered);
    const deletions = ordered.filter((change) => change.content === null);
    for (const change of deletions) await deleteFile(tree, change);
    await tree.removeEmptied(deletions.map((change) => parentOf(change.path)));
    const writes = ordered.filter((change) => change.content !== null);
    const written: WrittenFile[] = [];
    const staged = await stageAll(tree, writes, opts.onStaged);
    try {
      for (const [i, change] of writes.entries()) {
        const temp = staged[i] as StagedFile;
        publish(change, temp.path, temp.target);
        temp.published = true;
        tree.touch(parentOf(change.path));
        const stamp = stampIfUnchanged(temp);
        if (stamp) written.push({ path: change.path, stamp });
      }
    } finally {
      await Promise.all(
        staged.filter((t) => !t.published).map((t) => unlink(t.path).catch(() => {})),
      );
    }
    await tree.syncTouched();
    return written;
  } finally {
    await tree.close();
  }
}

async function checkExpectations(tree: DirTree, changes: FileChange[]): Promise<void> {
  const mismatched: string[] = [];
  for (const change of changes) {
    const found = await entryAt(tree, change.path);
    // A directory where a file is expected absent is fine here: the deletions in this same
    // call may empty and remove it; publishing then refuses it if they did not.
    const ok =
      change.expect === 'absent'
        ? found === undefined || found.isDirectory()
        : found?.isFile() === true && sameStamp(stampOf(found), change.expect);
    if (!ok) mismatched.push(change.path);
  }
  if (mismatched.length > 0) throw new ConcurrentEditError(mismatched);
}

/** The lstat of `path`, or `undefined` when it (or a parent directory) does not exist. */
async function entryAt(tree: DirTree, path: string): Promise<BigIntStats | undefined> {
  const parent = await tree.open(parentOf(path), false).catch((error: NodeJS.ErrnoException) => {
    // A file where a parent directory would be: the path itself is absent.
    if (error.code === 'ENOTDIR') return undefined;
    return concurrentEdit(path)(error);
  });
  if (!parent) return undefined;
  return lstatOrAbsent(parent.child(baseOf(path)));
}

/**
 * The lstat of `path`, or `undefined` when it does not exist. Synchronous, as are the other
 * per-file calls of a write: see `fillNewFile` in `durable-write.ts` for why.
 */
function lstatOrAbsent(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Runs a synchronous file operation, mapping its failure like the asynchronous `.catch`es. */
function attempt<T>(run: () => T, onError: (error: NodeJS.ErrnoException) => T): T {
  try {
    return run();
  } catch (error) {
    return onError(error as NodeJS.ErrnoException);
  }
}

async function deleteFile(tree: DirTree, change: FileChange): Promise<void> {
  const found = await entryAt(tree, change.path);
  if (change.expect === 'absent') {
    if (found !== undefined) throw new ConcurrentEditError([change.path]);
    return;
  }
  if (!found?.isFile() || !sameStamp(stampOf(found), change.expect)) {
    throw new ConcurrentEditError([change.path]);
  }
  const parent = (await tree.open(parentOf(change.path), false))!;
  attempt(() => unlinkSync(parent.child(baseOf(change.path))), concurrentEdit(change.path));
  tree.touch(parentOf(change.path));
}

/** A written, fsynced temp file waiting to be published at `target`. */
interface StagedFile {
  path: string;
  target: string;
  /** The inode, size and mtime of what was written (ctime moves on rename and link). */
  written: { ino: bigint; size: bigint; mtimeNs: bigint };
  published: boolean;
}

/**
 * Writes every change's temp file (parents created first, in order, so no two writers race
 * on one directory), {@link WRITE_CONCURRENCY} at a time. On failure, removes those written.
 */
async function stageAll(
  tree: DirTree,
  writes: FileChange[],
  onStaged: (() => void) | undefined,
): Promise<StagedFile[]> {
  for (const change of writes)
    await tree.open(parentOf(change.path), true).catch(concurrentEdit(change.path));
  const staged: (StagedFile | undefined)[] = new Array(writes.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < writes.length) {
      const i = next++;
      const change = writes[i] as FileChange;
      staged[i] = await stage(tree, change, change.content as Uint8Array);
      onStaged?.();
    }
  };
  const workers = Array.from({ length: Math.min(WRITE_CONCURRENCY, writes.length) }, worker);
  const settled = await Promise.allSettled(workers);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(
      staged.filter((t) => t !== undefined).map((t) => unlink(t.path).catch(() => {})),
    );
    throw failed.reason;
  }
  return staged as StagedFile[];
}

async function stage(tree: DirTree, change: FileChange, content: Uint8Array): Promise<StagedFile> {
  const parent = (await tree.open(parentOf(change.path), true).catch(concurrentEdit(change.path)))!;
  const temp = parent.child(newTempName());
  // ENOENT: the opened directory was removed meanwhile.
  const fd = attempt(() => createExclusive(temp, 0o644), concurrentEdit(change.path));
  const written = await fillNewFile(fd, temp, content, { sync: true });
  return {
    path: temp,
    target: parent.child(baseOf(change.path)),
    written: { ino: written.ino, size: written.size, mtimeNs: written.mtimeNs },
    published: false,
  };
}

/** The published file's stamp when it is still the inode, size and mtime that was written. */
function stampIfUnchanged(file: StagedFile): FileStamp | undefined {
  const now = attempt(
    () => lstatSync(file.target, { bigint: true }),
    () => undefined,
  );
  if (
    !now?.isFile() ||
    now.ino !== file.written.ino ||
    now.size !== file.written.size ||
    now.mtimeNs !== file.written.mtimeNs
  )
    return undefined;
  return stampOf(now);
}

function publish(change: FileChange, temp: string, target: string): void {
  if (change.expect === 'absent') {
    // link(2) never replaces: a file created meanwhile makes it fail instead of vanishing.
    const linked = attempt(
      () => {
        linkSync(temp, target);
        return true;
      },
      (error) => {
        if (error.code === 'EEXIST') throw new ConcurrentEditError([change.path]);
        if (NO_HARD_LINKS.has(error.code ?? '')) return false;
        return concurrentEdit(change.path)(error);
      },
    );
    if (linked) {
      unlinkSync(temp);
      return;
    }
  }
  // The remaining window between this lstat and rename(2) cannot be closed without
  // renameat2(RENAME_EXCHANGE), which Node 20 does not offer.
  const stats = attempt(
    () => lstatSync(target, { bigint: true }),
    () => undefined,
  );
  const expected =
    change.expect === 'absent'
      ? stats === undefined
      : stats?.isFile() === true && sameStamp(stampOf(stats), change.expect);
  if (!expected) throw new ConcurrentEditError([change.path]);
  attempt(() => renameSync(temp, target), concurrentEdit(change.path));
}

function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

function baseOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The directories of L opened during one writeChanges call, by notebook path. */
class DirTree {
  private readonly open_ = new Map<string, SecureDir>();
  private readonly touched = new Set<string>();

  constructor(root: SecureDir) {
    this.open_.set('', root);
  }

  /** Opens directory `path` (creating it, 0755 before umask, with `create`). */
  async open(path: string, create: boolean): Promise<SecureDir | undefined> {
    const known = this.open_.get(path);
    if (known) return known;
    const parent = await this.open(parentOf(path), create);
    if (!parent) return undefined;
    const name = baseOf(path);
    if (create) {
      await mkdir(parent.child(name), { mode: 0o755 }).then(
        () => this.touch(parentOf(path)),
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        },
      );
    }
    const dir = await parent.openChild(name).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' && !create) return undefined;
      throw error;
    });
    if (dir) this.open_.set(path, dir);
    return dir;
  }

  touch(path: string): void {
    this.touched.add(path);
  }

  /** Removes the given directories and their ancestors (never L) while they are empty. */
  async removeEmptied(paths: string[]): Promise<void> {
    const candidates = new Set<string>();
    for (let path of paths) {
      while (path !== '') {
        candidates.add(path);
        path = parentOf(path);
      }
    }
    // Deepest first, so a parent is tried after its children.
    const ordered = [...candidates].sort((a, b) => b.split('/').length - a.split('/').length);
    for (const path of ordered) {
      const parent = await this.open(parentOf(path), false).catch(concurrentEdit(path));
      if (!parent) continue;
      const removed = await rmdir(parent.child(baseOf(path))).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (['ENOTEMPTY', 'EEXIST', 'ENOENT', 'ENOTDIR'].includes(error.code ?? '')) return false;
          throw error;
        },
      );
      if (removed) {
        await this.forget(path);
        this.touch(parentOf(path));
      }
    }
  }

  private async forget(path: string): Promise<void> {
    for (const [known, dir] of this.open_) {
      if (known === path || known.startsWith(`${path}/`)) {
        this.open_.delete(known);
        this.touched.delete(known);
        await dir.close();
      }
    }
  }

  async syncTouched(): Promise<void> {
    for (const path of this.touched) await this.open_.get(path)?.sync();
  }

  async close(): Promise<void> {
    for (const dir of this.open_.values()) await dir.close();
    this.open_.clear();
  }
}
