import { ObjectMissingError } from '../errors';
import { type CommitData, decodeCommit, encodeCommit } from '../model/commit-codec';
import {
  type GitObject,
  hashObject,
  isOid,
  type ObjectType,
  type Oid,
} from '../model/object-format';
import { buildPack, type PackSummary, scanPack } from '../model/pack-format';
import { decodeTree, FILE_MODE, type TreeObjectEntry } from '../model/tree-codec';
import {
  type ConsolidationOptions,
  type ConsolidationReport,
  consolidate,
  consolidationMark,
  countLoose,
  measure,
  needsConsolidation,
  type ObjectDbSize,
  removeLeftovers,
} from './consolidate';
import type { GitDir, GitFs } from './git-dir';
import { writeLooseObject } from './loose-objects';
import { ObjectCache } from './object-cache';
import { readGitObject } from './object-files';
import { installPack } from './pack-install';
import { privateModeFs } from './private-mode-fs';
import { type BaseTree, buildTree, rebuildTree } from './tree-build';

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
   * Reads and strictly decodes one tree object (one directory level); `where` names it in
   * errors. Throws {@link ObjectMissingError} or {@link TreeError}.
   */
  readTreeObject(tree: Oid, where?: string): Promise<TreeObjectEntry[]>;
  /**
   * Stores a commit serialised by our own code (message bytes exact, author the commit's actor,
   * committer slivingdoc, +0000). With `staged`, it is held in memory until
   * {@link ObjectDb.persistStaged}.
   */
  writeCommit(commit: CommitData, opts?: StageOption): Promise<Oid>;
  /** Reads a commit; throws {@link ObjectMissingError} or {@link CommitFormatError}. */
  readCommit(oid: Oid): Promise<CommitData>;
  /**
   * Reads any object with its type (staged, loose, or in a pack, deltas resolved); undefined
   * when absent. A corrupt object throws. The bytes may be shared with the read cache.
   */
  readObject(oid: Oid): Promise<GitObject | undefined>;
  /** True when the object is present (staged in memory, loose, or in an indexed pack). */
  has(oid: Oid): Promise<boolean>;
  /**
   * Verifies `pack` is a well-formed git pack, then makes it readable: staged, index renamed in
   * last, so a failure leaves nothing that reads as imported. Importing the same pack twice is a
   * no-op. With `staged`, a pack of whole objects is held in memory instead (see
   * {@link StageOption}); a pack with deltas is always installed. Throws {@link PackError}.
   */
  importPack(pack: Uint8Array, opts?: StageOption): Promise<void>;
  /**
   * Writes every staged object to disk as one pack. Must run before anything durable (a
   * recorded baseline, the stat cache) names a staged object. A no-op when nothing is staged.
   * Persists run one at a time, each writing what was staged when it started (callers sharing
   * the database may stage meanwhile).
   */
  persistStaged(): Promise<void>;
  /** What the database holds on disk (objects, packs, loose objects, bytes). */
  size(): Promise<ObjectDbSize>;
  /**
   * Consolidates P when its loose objects or packs crossed the thresholds (or always, with
   * `full`): see `consolidate.ts`. Undefined when nothing was done. Must run under the lock
   * that serialises writers of this database, with no call using it meanwhile; `roots` must
   * name everything a reader may still need. Throws on an I/O failure, having removed nothing.
   */
  consolidate(opts: ConsolidationOptions): Promise<ConsolidationReport | undefined>;
  /**
   * Cheap (one listing of the pack directory; the loose objects are counted once per process):
   * true when the thresholds say {@link ObjectDb.consolidate} would do something now. Lets a
   * caller that must stop other users of the database first skip that when nothing is due.
   */
  consolidationDue(): boolean;
  /**
   * Removes leftovers of an interrupted install or consolidation (temp files, a pack without
   * its index). Under the same lock as {@link ObjectDb.consolidate}; returns the files removed.
   */
  removeLeftovers(): Promise<number>;
  /**
   * True when another process consolidated this database since this one last looked: what
   * this process believed present may be gone, so its caches are dropped here and the caller
   * must drop what it assumed too (verified heads). One small file read.
   */
  consolidatedElsewhere(): boolean;
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

/** Staged imported packs installed as they came by one persist; more go into one new pack. */
const PACKS_KEPT_AS_IMPORTED = 8;

/** Staged bytes above which staging writes everything at once, bounding the memory it holds. */
const STAGED_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * The one implementation of {@link ObjectDb}: a bare git directory over a file system (Node's
 * for P on disk, memfs for the in-memory test variant in `testing.ts`), so both variants share every code path.
 * Objects are encoded, hashed and written by our own code (Node's zlib and crypto are several
 * times faster than isomorphic-git's pako path, see `loose-objects.ts` and `pack-format.ts`);
 * isomorphic-git reads them back and indexes packs with deltas.
 */
export class GitObjectDb implements ObjectDb {
  readonly #dir: GitDir;
  /** Decoded objects known to be on disk. */
  readonly #objects = new ObjectCache(CACHE_LIMIT_BYTES);
  /** Objects not yet on disk (see {@link StageOption}); never evicted before they are written. */
  readonly #staged = new Map<Oid, GitObject>();
  #stagedBytes = 0;
  /** The persist running or last run (see {@link GitObjectDb.persistStaged}). */
  #persisting: Promise<void> = Promise.resolve();
  /**
   * Packs imported with `staged`, kept as they came: persisting installs their bytes instead of
   * encoding their objects again (a group member imports the increments published since its
   * baseline, the last one holding every member's commit, and each member persists them).
   */
  readonly #stagedPacks: { pack: Uint8Array; summary: PackSummary; oids: Oid[] }[] = [];
  /** Roots this database encoded itself (canonical all the way down), newest last, bounded. */
  readonly #builtTrees = new Set<Oid>();
  /** Loose objects on disk, as far as this process knows (undefined: not counted yet). */
  #looseObjects: number | undefined;
  /** The consolidation mark this process last saw. */
  #mark: string;

  /** A database over `fs` at `gitdir`, which must already hold `objects/pack`. */
  constructor(fs: GitFs, gitdir: string) {
    this.#dir = { fs, gitdir, cache: {} };
    this.#mark = consolidationMark(this.#dir);
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
    await this.#installObjects(
      [...fresh.values()].map((content) => ({ type: 'blob' as const, content })),
    );
    for (const oid of fresh.keys()) this.#unstage(oid);
    return oids;
  }

  async readBlob(oid: Oid): Promise<Uint8Array> {
    return this.#readTyped(oid, 'blob');
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
    const tree = rebuilt ?? (await buildTree(entries, putTree));
    await this.#boundStaged();
    this.#builtTrees.delete(tree);
    this.#builtTrees.add(tree);
    if (this.#builtTrees.size > BUILT_TREES_KEPT) {
      const oldest = this.#builtTrees.values().next().value;
      if (oldest !== undefined) this.#builtTrees.delete(oldest);
    }
    return tree;
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

  async readTreeObject(tree: Oid, where = ''): Promise<TreeObjectEntry[]> {
    return decodeTree(await this.#readTyped(tree, 'tree'), where);
  }

  async writeCommit(commit: CommitData, opts: StageOption = {}): Promise<Oid> {
    const content = encodeCommit(commit);
    if (!opts.staged) return this.putObject('commit', content);
    const oid = await this.#stageNew('commit', content);
    await this.#boundStaged();
    return oid;
  }

  async readCommit(oid: Oid): Promise<CommitData> {
    return decodeCommit(await this.#readTyped(oid, 'commit'));
  }

  async has(oid: Oid): Promise<boolean> {
    if (!isOid(oid)) return false;
    if (this.#staged.has(oid) || this.#objects.get(oid)) return true;
    return (await this.readObject(oid)) !== undefined;
  }

  async importPack(pack: Uint8Array, opts: StageOption = {}): Promise<void> {
    const summary = scanPack(pack);
    const objects = summary.entries.map((entry) => entry.object);
    if (opts.staged && objects.every((object) => object !== undefined)) {
      const stagedBefore = this.#staged.size;
      const oids: Oid[] = [];
      for (const object of objects as GitObject[])
        oids.push(await this.#stageNew(object.type, object.content));
      if (this.#staged.size > stagedBefore) this.#stagedPacks.push({ pack, summary, oids });
      await this.#boundStaged();
      return;
    }
    await this.#install(pack, summary);
  }

  async persistStaged(): Promise<void> {
    // One at a time: callers sharing the database (several directories of one process) may
    // persist while others stage; each persist writes what was staged when it started.
    const run = this.#persisting.then(() => this.#persistNow());
    this.#persisting = run.catch(() => undefined);
    return run;
  }

  async #persistNow(): Promise<void> {
    const packs = this.#stagedPacks.splice(0);
    if (this.#staged.size === 0) return;
    const staged = [...this.#staged];
    // Imported packs are installed as they came (re-encoding a group's increment cost every
    // member more than importing it); only what none of them holds goes into one new pack. Past
    // a few packs, everything goes into one, so P gains at most that many packs per persist.
    const asImported = packs.length <= PACKS_KEPT_AS_IMPORTED ? packs : [];
    const covered = new Set<Oid>();
    for (const { pack, summary, oids } of asImported) {
      await this.#install(pack, summary, oids);
      for (const oid of oids) covered.add(oid);
    }
    const rest = staged.filter(([oid]) => !covered.has(oid));
    if (rest.length > 0) await this.#installObjects(rest.map(([, object]) => object));
    // Staged meanwhile by another caller: left for the next persist.
    for (const [oid] of staged) this.#unstage(oid);
  }

  /**
   * Stores one object on disk unless it is known to be there; returns its oid. An object that is
   * only staged is written too (and no longer staged). Not part of {@link ObjectDb}: callers
   * outside this package write typed objects; tests write foreign trees with it.
   */
  async putObject(type: ObjectType, content: Uint8Array): Promise<Oid> {
    const oid = hashObject(type, content);
    if (this.#objects.get(oid)) return oid;
    this.#unstage(oid);
    writeLooseObject(this.#dir, oid, { type, content });
    if (this.#looseObjects !== undefined) this.#looseObjects += 1;
    this.#objects.set(oid, { type, content });
    return oid;
  }

  async readObject(oid: Oid): Promise<GitObject | undefined> {
    const hit = this.#staged.get(oid) ?? this.#objects.get(oid);
    if (hit) return hit;
    if (!isOid(oid)) return undefined;
    const found = await readGitObject(this.#dir, oid);
    if (found) this.#objects.set(oid, found);
    return found;
  }

  async size(): Promise<ObjectDbSize> {
    return measure(this.#dir);
  }

  consolidationDue(): boolean {
    this.#looseObjects ??= countLoose(this.#dir);
    return needsConsolidation(this.#dir, this.#looseObjects);
  }

  async consolidate(opts: ConsolidationOptions): Promise<ConsolidationReport | undefined> {
    if (opts.full !== true && !this.consolidationDue()) return undefined;
    const started = performance.now();
    const before = measure(this.#dir);
    const done = await consolidate(this.#dir, (oid) => this.readObject(oid), opts);
    this.#looseObjects = countLoose(this.#dir);
    if (done === undefined) return undefined;
    const { keep, ...report } = done;
    this.#mark = consolidationMark(this.#dir);
    this.#forget((oid) => keep.has(oid));
    return { ...report, before, after: measure(this.#dir), ms: performance.now() - started };
  }

  async removeLeftovers(): Promise<number> {
    return removeLeftovers(this.#dir);
  }

  consolidatedElsewhere(): boolean {
    const mark = consolidationMark(this.#dir);
    const changed = mark !== this.#mark;
    this.#mark = mark;
    if (changed) {
      this.#looseObjects = undefined;
      this.#forget(() => false);
    }
    return changed;
  }

  /** Forgets what it believed on disk, except the objects `present` still vouches for. */
  #forget(present: (oid: Oid) => boolean): void {
    this.#objects.retain(present);
    for (const tree of this.#builtTrees) if (!present(tree)) this.#builtTrees.delete(tree);
    // isomorphic-git's cache may hold indexes of removed packs (keys are its own symbols).
    const cache = this.#dir.cache as Record<string | symbol, unknown>;
    for (const key of Reflect.ownKeys(cache)) delete cache[key];
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
    this.#stagedBytes -= object.content.byteLength;
  }

  async #boundStaged(): Promise<void> {
    if (this.#stagedBytes > STAGED_LIMIT_BYTES) await this.persistStaged();
  }

  /** Writes `objects` as one pack of whole objects and makes it readable. */
  async #installObjects(objects: GitObject[]): Promise<void> {
    const pack = buildPack(objects);
    await this.#install(pack.bytes, pack.summary);
  }

  async #install(pack: Uint8Array, summary: PackSummary, oids?: Oid[]): Promise<void> {
    for (const { oid, object } of await installPack(this.#dir, pack, summary, oids))
      this.#objects.set(oid, object);
  }

  /** Reads an object that must exist with type `type`. */
  async #readTyped(oid: Oid, type: ObjectType): Promise<Uint8Array> {
    const found = await this.readObject(oid);
    if (!found || found.type !== type)
      throw new ObjectMissingError(oid, `${type} ${oid} is not in the object database`);
    return found.content;
  }
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
