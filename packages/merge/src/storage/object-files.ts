import type * as NodeFs from 'node:fs';
import { inflateSync } from 'node:zlib';
import { type GitObject, hashObject, type ObjectType, type Oid } from '../model/object-format';
import {
  type EntryHeader,
  OFS_DELTA,
  REF_DELTA,
  readEntryHeader,
  TAG,
  TYPE_NAMES,
} from '../model/pack-format';
import { type GitDir, loadIsomorphicGit } from './git-dir';

/** What only isomorphic-git reads: a delta entry (a foreign pack) or an index other than v2. */
export const NEEDS_ISOMORPHIC_GIT = Symbol('needs isomorphic-git');

/**
 * Reads one object, loose or packed. Loose files and whole objects in packs (all our writers
 * produce) are read by our own code ({@link readObjectFile}); a delta entry of a foreign pack (the
 * Go implementation's libgit2 packs) is read through isomorphic-git, which resolves deltas.
 * Undefined when absent or of a type the notebook never stores; a corrupt object throws.
 */
export async function readGitObject(dir: GitDir, oid: Oid): Promise<GitObject | undefined> {
  const own = readObjectFile(dir, oid);
  if (own !== NEEDS_ISOMORPHIC_GIT) return own;
  const git = await loadIsomorphicGit();
  try {
    const { type, object } = await git.readObject({
      fs: dir.fs,
      gitdir: dir.gitdir,
      oid,
      format: 'content',
      cache: dir.cache,
    });
    if (type !== 'blob' && type !== 'tree' && type !== 'commit') return undefined;
    return { type, content: object as Uint8Array };
  } catch (error) {
    if (error instanceof git.Errors.NotFoundError) return undefined;
    throw error;
  }
}

/**
 * Reads one object from the layouts our own writers produce: loose files and whole objects in
 * packs with a v2 index. Written by hand so that a server reading back its own objects (a
 * restart over an existing private root) does not load isomorphic-git, about 11 MiB resident
 * (docs/performance.md, "Idle memory and start-up"). Every object read is checked against its
 * id, as isomorphic-git checks loose objects. Undefined when absent or of a type the notebook
 * never stores; a corrupt object throws; {@link NEEDS_ISOMORPHIC_GIT} for a delta entry.
 */
export function readObjectFile(
  dir: GitDir,
  oid: Oid,
): GitObject | undefined | typeof NEEDS_ISOMORPHIC_GIT {
  const fs = dir.fs as unknown as typeof NodeFs;
  const loose = readIfPresent(fs, `${dir.gitdir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
  if (loose !== undefined) return fromLoose(oid, inflateSync(loose));
  const packs = packIndexes(dir);
  for (const refresh of [false, true]) {
    if (refresh) packs.refresh();
    for (const index of packs.all()) {
      if (index === NEEDS_ISOMORPHIC_GIT) return NEEDS_ISOMORPHIC_GIT;
      const offset = index.offsetOf(oid);
      if (offset === undefined) continue;
      try {
        return fromPackEntry(fs, index, offset, oid);
      } catch (error) {
        // A consolidation (of another process sharing P) removed the pack since it was listed:
        // the object, if kept, is in the pack that replaced it, which the next listing finds.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || refresh) throw error;
        break;
      }
    }
  }
  return undefined;
}

function fromLoose(oid: Oid, framed: Buffer): GitObject | undefined {
  const nul = framed.indexOf(0);
  const [type, size] = framed.subarray(0, Math.max(nul, 0)).toString('latin1').split(' ');
  const content = framed.subarray(nul + 1);
  if (nul < 0 || Number(size) !== content.byteLength) throw corrupt();
  if (type !== 'blob' && type !== 'tree' && type !== 'commit') {
    if (type === 'tag') return undefined;
    throw corrupt();
  }
  return checked(oid, type, content);
}

function fromPackEntry(
  fs: typeof NodeFs,
  index: PackIndex,
  offset: number,
  oid: Oid,
): GitObject | undefined | typeof NEEDS_ISOMORPHIC_GIT {
  const entry = readRange(fs, index.packPath, offset, index.endOf(offset));
  if (entry.byteLength === 0) throw corrupt();
  let header: EntryHeader;
  try {
    header = readEntryHeader(entry, 0, entry.byteLength);
  } catch {
    throw corrupt();
  }
  const { typeCode: typeNumber, size, dataAt: at } = header;
  if (typeNumber === OFS_DELTA || typeNumber === REF_DELTA) return NEEDS_ISOMORPHIC_GIT;
  if (typeNumber === TAG) return undefined;
  const type = TYPE_NAMES[typeNumber];
  if (type === undefined) throw corrupt();
  const content = inflateSync(entry.subarray(at));
  if (content.byteLength !== size) throw corrupt();
  return checked(oid, type, content);
}

function checked(oid: Oid, type: ObjectType, content: Uint8Array): GitObject {
  if (hashObject(type, content) !== oid) throw corrupt();
  return { type, content };
}

// No object id in the message: ids are never logged (docs/errors.md).
const corrupt = () => new Error('a stored git object is corrupt (its bytes do not match its id)');

function readIfPresent(fs: typeof NodeFs, path: string): Buffer | undefined {
  try {
    return fs.readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function readRange(fs: typeof NodeFs, path: string, start: number, end: number): Buffer {
  const bytes = Buffer.alloc(end - start);
  const fd = fs.openSync(path, 'r');
  try {
    let read = 0;
    while (read < bytes.length) {
      const n = fs.readSync(fd, bytes, read, bytes.length - read, start + read);
      if (n === 0) throw corrupt();
      read += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return bytes;
}

/** One pack's v2 `.idx`: object ids sorted, with their offsets into the pack. */
export class PackIndex {
  readonly packPath: string;
  readonly #idx: Buffer;
  readonly #count: number;
  readonly #packEnd: number;
  #sortedOffsets: number[] | undefined;

  constructor(packPath: string, idx: Buffer, packSize: number) {
    this.packPath = packPath;
    this.#idx = idx;
    this.#count = idx.readUInt32BE(8 + 255 * 4);
    // The pack ends with its 20-byte checksum.
    this.#packEnd = packSize - 20;
  }

  /** True for a v2 index (magic `\377tOc`, version 2); git's old v1 is left to isomorphic-git. */
  static isV2(idx: Buffer): boolean {
    return (
      idx.length >= 8 + 256 * 4 && idx.readUInt32BE(0) === 0xff744f63 && idx.readUInt32BE(4) === 2
    );
  }

  offsetOf(oid: Oid): number | undefined {
    const key = Buffer.from(oid, 'hex');
    const first = key[0] ?? 0;
    let low = first === 0 ? 0 : this.#idx.readUInt32BE(8 + (first - 1) * 4);
    let high = this.#idx.readUInt32BE(8 + first * 4);
    const ids = 8 + 256 * 4;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = Buffer.compare(
        this.#idx.subarray(ids + middle * 20, ids + middle * 20 + 20),
        key,
      );
      if (order === 0) return this.#offsetAt(middle);
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return undefined;
  }

  /** Where the entry at `offset` ends: the next entry's offset, or the pack's checksum. */
  endOf(offset: number): number {
    this.#sortedOffsets ??= Array.from({ length: this.#count }, (_, i) => this.#offsetAt(i)).sort(
      (a, b) => a - b,
    );
    const offsets = this.#sortedOffsets;
    let low = 0;
    let high = offsets.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((offsets[middle] ?? 0) <= offset) low = middle + 1;
      else high = middle;
    }
    return offsets[low] ?? this.#packEnd;
  }

  /** How many objects the pack holds. */
  get count(): number {
    return this.#count;
  }

  /** The object ids of the pack, in index (sorted) order. */
  *oids(): Iterable<Oid> {
    const ids = 8 + 256 * 4;
    for (let i = 0; i < this.#count; i += 1)
      yield this.#idx.toString('hex', ids + i * 20, ids + i * 20 + 20) as Oid;
  }

  #offsetAt(position: number): number {
    const table = 8 + 256 * 4 + this.#count * 24;
    const small = this.#idx.readUInt32BE(table + position * 4);
    if ((small & 0x80000000) === 0) return small;
    const large = table + this.#count * 4 + (small & 0x7fffffff) * 8;
    return Number(this.#idx.readBigUInt64BE(large));
  }
}

/** The packs of one database, by `.idx` name; packs are immutable, new ones are found on a miss. */
class PackIndexes {
  readonly #dir: GitDir;
  readonly #loaded = new Map<string, PackIndex | typeof NEEDS_ISOMORPHIC_GIT>();
  #listed = false;

  constructor(dir: GitDir) {
    this.#dir = dir;
  }

  all(): Iterable<PackIndex | typeof NEEDS_ISOMORPHIC_GIT> {
    if (!this.#listed) this.refresh();
    return this.#loaded.values();
  }

  /** The packs by `.idx` file name, listed afresh. */
  entries(): [string, PackIndex | typeof NEEDS_ISOMORPHIC_GIT][] {
    this.refresh();
    return [...this.#loaded];
  }

  refresh(): void {
    const fs = this.#dir.fs as unknown as typeof NodeFs;
    const packDir = `${this.#dir.gitdir}/objects/pack`;
    const names = fs
      .readdirSync(packDir)
      .filter((n) => n.startsWith('pack-') && n.endsWith('.idx'));
    for (const name of this.#loaded.keys()) if (!names.includes(name)) this.#loaded.delete(name);
    for (const name of names) {
      if (this.#loaded.has(name)) continue;
      const idx = fs.readFileSync(`${packDir}/${name}`);
      const packPath = `${packDir}/${name.slice(0, -'.idx'.length)}.pack`;
      this.#loaded.set(
        name,
        PackIndex.isV2(idx)
          ? new PackIndex(packPath, idx, fs.statSync(packPath).size)
          : NEEDS_ISOMORPHIC_GIT,
      );
    }
    this.#listed = true;
  }
}

/** One pack index set per database (keyed by its isomorphic-git cache object, one per database). */
const indexesOf = new WeakMap<object, PackIndexes>();

/**
 * The installed packs of `dir` by `.idx` file name, listed afresh ({@link NEEDS_ISOMORPHIC_GIT}
 * for an index other than v2). Packs removed since the last listing are forgotten.
 */
export function listPacks(dir: GitDir): [string, PackIndex | typeof NEEDS_ISOMORPHIC_GIT][] {
  return packIndexes(dir).entries();
}

function packIndexes(dir: GitDir): PackIndexes {
  let indexes = indexesOf.get(dir.cache);
  if (indexes === undefined) {
    indexes = new PackIndexes(dir);
    indexesOf.set(dir.cache, indexes);
  }
  return indexes;
}
