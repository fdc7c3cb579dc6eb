import { randomUUID } from 'node:crypto';
import type * as NodeFs from 'node:fs';
import * as git from 'isomorphic-git';
import { createFsFromVolume, Volume } from 'memfs';
import { type CommitData, decodeCommit, encodeCommit } from './commitCodec';
import { CommitFormatError, ObjectMissingError, TreeError } from './errors';
import { type CachedObject, ObjectCache } from './objectCache';
import { hashObject, isOid, type ObjectType, type Oid } from './objectFormat';
import { buildPack, deflateObject } from './packFormat';
import { installPack } from './packInstall';
import { privateModeFs } from './privateModeFs';
import { type BaseTree, rebuildTree } from './treeBuild';
import {
  checkOid,
  DIR_MODE,
  decodeTree,
  encodeTree,
  FILE_MODE,
  splitNotebookPath,
  type TreeObjectEntry,
} from './treeCodec';

/** Notebook path → blob oid; files only (directories are implied by the paths). */
export type TreeEntries = Map<string, Oid>;

/** The object store of one private state: blobs, trees and commits in git's SHA-1 format. */
export interface ObjectDb {
  /** Stores `content` as a blob; returns its oid. */
  writeBlob(content: Uint8Array): Promise<Oid>;
  /**
   * Stores many blobs at once as one pack (the bulk path: a first scan of a large notebook);
   * returns their oids in input order. Much faster than one loose object per blob.
   */
  writeBlobs(contents: Uint8Array[]): Promise<Oid[]>;
  /**
   * Reads a blob; throws {@link ObjectMissingError} when absent or not a blob. The bytes may be
   * shared with the read cache: treat them as read-only.
   */
  readBlob(oid: Oid): Promise<Uint8Array>;
  /**
   * Builds nested trees (git order, modes 100644/40000) from a flat path map; throws
   * {@link TreeError}. With `base` (a tree and its files, e.g. R when publishing on top of it),
   * only the directories holding a changed path are re-encoded when this database built
   * `base.tree` itself; the result is the same oid either way. With `staged`, new trees are held
   * in memory until {@link ObjectDb.persistStaged}.
   */
  writeTree(entries: TreeEntries, base?: BaseTree, opts?: StageOption): Promise<Oid>;
  /** Reads a tree back into a flat path map of files; throws {@link TreeError} on foreign modes or names. */
  readTree(tree: Oid): Promise<TreeEntries>;
  /**
   * Stores a commit serialised by our own code (message bytes exact, author/committer
   * slivingdoc, +0000). With `staged`, it is held in memory until {@link ObjectDb.persistStaged}.
   */
  writeCommit(commit: CommitData, opts?: StageOption): Promise<Oid>;
  /** Reads a commit; throws {@link ObjectMissingError} or {@link CommitFormatError}. */
  readCommit(oid: Oid): Promise<CommitData>;
  /** True when the object is present (staged in memory, loose, or in an indexed pack). */
  has(oid: Oid): Promise<boolean>;
  /**
   * Writes every staged object to disk: commits this database serialised with isomorphic-git's
   * `writeObject` (SPEC §6), everything else (imported commits included) as one pack. Must run
   * before anything durable (a recorded baseline, the stat cache) names a staged object. A no-op
   * when nothing is staged.
   */
  persistStaged(): Promise<void>;
}

/**
 * `staged: true` keeps new objects in memory (readable through the database) instead of writing
 * them: work that may be thrown away (a proposal that loses its race, increments imported while
 * contending) then creates no files, and what is kept is written in one go.
 */
export interface StageOption {
  staged?: boolean;
}

/** Below this many new blobs, loose objects are cheaper than a pack and its index. */
const BULK_THRESHOLD = 64;

/** Roots of trees built here that {@link ObjectDb.writeTree} may build on incrementally. */
const BUILT_TREES_KEPT = 16;

/** Decoded objects kept in memory per database (bytes). */
const CACHE_LIMIT_BYTES = 64 * 1024 * 1024;

/** Staged bytes above which staging writes everything at once, bounding the memory it holds. */
const STAGED_LIMIT_BYTES = 32 * 1024 * 1024;

type GitFs = Parameters<typeof git.readObject>[0]['fs'];

/**
 * The one implementation of {@link ObjectDb}: isomorphic-git's object storage over a file
 * system (Node's for P on disk, memfs for the in-memory variant), so both variants share every
 * code path. Objects are encoded and hashed here (Node's zlib and crypto are several times
 * faster than isomorphic-git's pako path) and handed to `writeObject` pre-deflated.
 */
export class GitObjectDb implements ObjectDb {
  /** The file system isomorphic-git works on. */
  readonly fs: GitFs;
  /** The git directory (bare layout). */
  readonly gitdir: string;
  /** isomorphic-git's cache object; one per database, passed to every call (pack indexes). */
  readonly gitCache: object = {};
  /** Decoded objects known to be on disk. */
  readonly #objects = new ObjectCache(CACHE_LIMIT_BYTES);
  /** Objects not yet on disk (see {@link StageOption}); never evicted before they are written. */
  readonly #staged = new Map<Oid, CachedObject>();
  /** Staged commits this database serialised itself (imported ones travel in packs). */
  readonly #stagedOwnCommits = new Set<Oid>();
  #stagedBytes = 0;
  /** Roots this database encoded itself (canonical all the way down), newest last, bounded. */
  readonly #builtTrees = new Set<Oid>();

  constructor(fs: GitFs, gitdir: string) {
    this.fs = fs;
    this.gitdir = gitdir;
  }

  async writeBlob(content: Uint8Array): Promise<Oid> {
    return this.putObject('blob', content);
  }

  async writeBlobs(contents: Uint8Array[]): Promise<Oid[]> {
    const oids = contents.map((content) => hashObject('blob', content));
    const fresh = new Map<Oid, Uint8Array>();
    contents.forEach((content, i) => {
      const oid = oids[i] as Oid;
      if (!this.#objects.get(oid)) fresh.set(oid, content);
    });
    if (fresh.size < BULK_THRESHOLD) {
      for (const content of fresh.values()) await this.putObject('blob', content);
      return oids;
    }
    // A pack may repeat an object another pack or a loose file holds: readers take either copy.
    const pack = buildPack(
      [...fresh.values()].map((content) => ({ type: 'blob' as const, content })),
    );
    await installPack(this, pack.bytes, pack.summary);
    for (const oid of fresh.keys()) this.#unstage(oid);
    return oids;
  }

  async readBlob(oid: Oid): Promise<Uint8Array> {
    return this.readTyped(oid, 'blob');
  }

  async writeTree(entries: TreeEntries, base?: BaseTree, opts: StageOption = {}): Promise<Oid> {
    const putTree = async (content: Uint8Array) =>
      opts.staged ? this.#stageNew('tree', content) : this.putObject('tree', content);
    const rebuilt =
      base !== undefined && this.#builtTrees.has(base.tree)
        ? await rebuildTree(entries, base, {
            readTreeObject: (tree, where) => this.readTreeObject(tree, where),
            putTree,
          })
        : undefined;
    const tree = rebuilt ?? (await this.#buildTree(entries, putTree));
    await this.#boundStaged();
    this.#builtTrees.delete(tree);
    this.#builtTrees.add(tree);
    if (this.#builtTrees.size > BUILT_TREES_KEPT) {
      const oldest = this.#builtTrees.values().next().value;
      if (oldest !== undefined) this.#builtTrees.delete(oldest);
    }
    return tree;
  }

  async #buildTree(
    entries: TreeEntries,
    putTree: (content: Uint8Array) => Promise<Oid>,
  ): Promise<Oid> {
    const root: DirNode = new Map();
    for (const [path, oid] of entries) {
      checkOid(oid, path);
      const segments = splitNotebookPath(path);
      let dir = root;
      for (let i = 0; i < segments.length - 1; i++) {
        const name = segments[i] as string;
        const next = dir.get(name);
        if (typeof next === 'string') throw pathConflict(path);
        if (next) dir = next;
        else {
          const created: DirNode = new Map();
          dir.set(name, created);
          dir = created;
        }
      }
      const leaf = segments[segments.length - 1] as string;
      if (dir.has(leaf)) throw pathConflict(path);
      dir.set(leaf, oid);
    }
    return this.#writeDir(root, putTree);
  }

  async #writeDir(dir: DirNode, putTree: (content: Uint8Array) => Promise<Oid>): Promise<Oid> {
    const entries: TreeObjectEntry[] = [];
    for (const [name, child] of dir) {
      if (typeof child === 'string') entries.push({ mode: FILE_MODE, name, oid: child });
      else entries.push({ mode: DIR_MODE, name, oid: await this.#writeDir(child, putTree) });
    }
    return putTree(encodeTree(entries));
  }

  async readTree(tree: Oid): Promise<TreeEntries> {
    const result: TreeEntries = new Map();
    await this.#flatten(tree, '', result);
    return result;
  }

  async #flatten(tree: Oid, prefix: string, into: TreeEntries): Promise<void> {
    for (const entry of await this.readTreeObject(tree, prefix)) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.mode === FILE_MODE) into.set(path, entry.oid);
      else await this.#flatten(entry.oid, path, into);
    }
  }

  /** Reads and strictly decodes one tree object; `where` names it in errors. */
  async readTreeObject(tree: Oid, where = ''): Promise<TreeObjectEntry[]> {
    return decodeTree(await this.readTyped(tree, 'tree'), where);
  }

  async writeCommit(commit: CommitData, opts: StageOption = {}): Promise<Oid> {
    const content = encodeCommit(commit);
    if (opts.staged) {
      const oid = await this.#stageNew('commit', content);
      if (this.#staged.has(oid)) this.#stagedOwnCommits.add(oid);
      await this.#boundStaged();
      return oid;
    }
    const oid = hashObject('commit', content);
    if (this.#objects.get(oid)) return oid;
    this.#unstage(oid);
    return this.#writeCommitObject(content);
  }

  async #writeCommitObject(content: Uint8Array): Promise<Oid> {
    // SPEC §6 names this call: our bytes are stored unchanged. Handed over already wrapped and
    // deflated with Node's zlib: for the content format isomorphic-git deflates through a web
    // CompressionStream, about 10 ms of CPU per commit here (plus a first-use set-up per
    // process), once per accepted commit of every writer.
    const oid = hashObject('commit', content);
    const wrapped = Buffer.concat([Buffer.from(`commit ${content.byteLength}\0`), content]);
    const written = await git.writeObject({
      fs: this.#synchronousFs(),
      gitdir: this.gitdir,
      type: 'commit',
      object: deflateObject(wrapped),
      format: 'deflated',
      oid,
    });
    this.#objects.set(written, { type: 'commit', content });
    return written;
  }

  async readCommit(oid: Oid): Promise<CommitData> {
    return decodeCommit(await this.readTyped(oid, 'commit'));
  }

  async has(oid: Oid): Promise<boolean> {
    if (!isOid(oid)) return false;
    if (this.#staged.has(oid) || this.#objects.get(oid)) return true;
    return (await this.readObject(oid)) !== undefined;
  }

  /** Stages an object unless it is staged or known to be on disk; returns its oid. */
  async #stageNew(type: ObjectType, content: Uint8Array): Promise<Oid> {
    const oid = hashObject(type, content);
    if (!this.#staged.has(oid) && !this.#objects.get(oid)) {
      this.#staged.set(oid, { type, content });
      this.#stagedBytes += content.byteLength;
    }
    return oid;
  }

  #unstage(oid: Oid): void {
    const object = this.#staged.get(oid);
    if (object === undefined) return;
    this.#staged.delete(oid);
    this.#stagedOwnCommits.delete(oid);
    this.#stagedBytes -= object.content.byteLength;
  }

  /** Holds the whole objects of a scanned pack in memory (see {@link StageOption}). */
  async stageObjects(objects: Iterable<CachedObject>): Promise<void> {
    for (const object of objects) await this.#stageNew(object.type, object.content);
    await this.#boundStaged();
  }

  async #boundStaged(): Promise<void> {
    if (this.#stagedBytes > STAGED_LIMIT_BYTES) await this.persistStaged();
  }

  async persistStaged(): Promise<void> {
    if (this.#staged.size === 0) return;
    const staged = [...this.#staged];
    // Trees and blobs first, our own commits last: a process killed in between leaves no
    // commit whose tree is missing, so a present head never lacks its own objects.
    const packed = staged.filter(([oid]) => !this.#stagedOwnCommits.has(oid));
    if (packed.length > 0) {
      const pack = buildPack(packed.map(([, object]) => object));
      await installPack(this, pack.bytes, pack.summary);
    }
    for (const [oid, object] of staged) {
      if (this.#stagedOwnCommits.has(oid)) await this.#writeCommitObject(object.content);
    }
    for (const [oid] of staged) this.#staged.delete(oid);
    this.#stagedOwnCommits.clear();
    this.#stagedBytes = 0;
  }

  /** Puts an object known to be stored into the read cache. */
  remember(oid: Oid, object: CachedObject): void {
    this.#objects.set(oid, object);
  }

  #synchronous: GitFs | undefined;

  /**
   * The database's file system with promise-returning methods that run the synchronous calls,
   * for isomorphic-git's `writeObject` of a commit: its handful of stats, mkdirs and one small
   * write then take microseconds instead of each waiting for a thread-pool slot behind
   * concurrent fsyncs, inside the commit's read-current → CAS window. `promises` is an
   * enumerable own property, which is how isomorphic-git picks the promise API.
   */
  #synchronousFs(): GitFs {
    if (this.#synchronous) return this.#synchronous;
    const fs = this.fs as unknown as Record<string, (...args: unknown[]) => unknown>;
    const promises: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const name of SYNC_BACKED_CALLS) {
      const call = fs[`${name}Sync`] as (...args: unknown[]) => unknown;
      promises[name] = async (...args: unknown[]) => call(...args);
    }
    this.#synchronous = { promises } as unknown as GitFs;
    return this.#synchronous;
  }

  /**
   * Stores one object on disk unless it is known to be there; returns its oid. An object that is
   * only staged is written too (and no longer staged).
   */
  async putObject(type: ObjectType, content: Uint8Array): Promise<Oid> {
    const oid = hashObject(type, content);
    if (this.#objects.get(oid)) return oid;
    this.#unstage(oid);
    this.#writeLoose(oid, type, content);
    this.#objects.set(oid, { type, content });
    return oid;
  }

  /**
   * Writes one loose object in git's layout (`objects/xx/rest`, zlib of `type size\0content`),
   * by hand rather than with isomorphic-git's `writeObject`: that call builds a new file-system
   * wrapper per call (whose promise probe throws twice) and makes several asynchronous calls,
   * each queued behind concurrent fsyncs in Node's 4-thread pool, inside a commit's
   * read-current → CAS window. A few synchronous page-cache writes take microseconds. Written
   * to a temp name and renamed, so a reader never sees a torn object (isomorphic-git writes in
   * place); like isomorphic-git, no fsync: P's objects are re-fetched or repaired when a crash
   * tears them (closure check), and the store holds every published object durably.
   */
  #writeLoose(oid: Oid, type: ObjectType, content: Uint8Array): void {
    const fs = this.fs as unknown as typeof NodeFs;
    const dir = `${this.gitdir}/objects/${oid.slice(0, 2)}`;
    const path = `${dir}/${oid.slice(2)}`;
    if (fs.existsSync(path)) return;
    const header = Buffer.from(`${type} ${content.byteLength}\0`);
    const deflated = deflateObject(Buffer.concat([header, content]));
    const temp = `${dir}/tmp-${randomUUID()}`;
    try {
      try {
        fs.writeFileSync(temp, deflated);
      } catch (error) {
        // The fan-out directory is created on first use only: under concurrent fsyncs even a
        // mkdir of an existing directory can wait for the journal and block the event loop.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(temp, deflated);
      }
      fs.renameSync(temp, path);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
  }

  /** Reads one object with its type; undefined when absent. Corrupt objects throw. */
  async readObject(oid: Oid): Promise<CachedObject | undefined> {
    const hit = this.#staged.get(oid) ?? this.#objects.get(oid);
    if (hit) return hit;
    if (!isOid(oid)) return undefined;
    try {
      const { type, object } = await git.readObject({
        fs: this.fs,
        gitdir: this.gitdir,
        oid,
        format: 'content',
        cache: this.gitCache,
      });
      if (type !== 'blob' && type !== 'tree' && type !== 'commit') return undefined;
      const found = { type, content: object as Uint8Array } satisfies CachedObject;
      this.#objects.set(oid, found);
      return found;
    } catch (error) {
      if (error instanceof git.Errors.NotFoundError) return undefined;
      throw error;
    }
  }

  /** Reads an object that must exist with type `type`. */
  async readTyped(oid: Oid, type: ObjectType): Promise<Uint8Array> {
    const found = await this.readObject(oid);
    if (!found || found.type !== type)
      throw new ObjectMissingError(oid, `${type} ${oid} is not in the object database`);
    return found.content;
  }
}

type DirNode = Map<string, Oid | DirNode>;

/** The calls isomorphic-git's file-system wrapper binds (its `commands`, plus `rm`). */
const SYNC_BACKED_CALLS = [
  'readFile',
  'writeFile',
  'mkdir',
  'rmdir',
  'unlink',
  'stat',
  'lstat',
  'readdir',
  'readlink',
  'symlink',
  'rm',
] as const;

function pathConflict(path: string): TreeError {
  return new TreeError(
    'PATH_CONFLICT',
    `${JSON.stringify(path)} is both a file and a directory`,
    path,
  );
}

/**
 * Opens (creating when absent) an on-disk object database at `gitdir`, a bare git directory
 * inside the caller's private state. Objects read are cached in memory (64 MiB).
 */
export async function openObjectDb(opts: { gitdir: string }): Promise<ObjectDb> {
  const fs = privateModeFs();
  await fs.promises.mkdir(`${opts.gitdir}/objects/pack`, { recursive: true });
  return new GitObjectDb(fs as unknown as GitFs, opts.gitdir);
}

/** An object database held entirely in memory (tests, throwaway merges). */
export function openMemoryObjectDb(): ObjectDb {
  const fs = createFsFromVolume(new Volume());
  fs.mkdirSync('/git/objects/pack', { recursive: true });
  return new GitObjectDb(fs as unknown as GitFs, '/git');
}

/** The concrete database behind an {@link ObjectDb} from this package. */
export function gitDbOf(db: ObjectDb): GitObjectDb {
  if (!(db instanceof GitObjectDb))
    throw new TypeError('object database was not opened by @slivingdoc/merge');
  return db;
}

export { CommitFormatError };
