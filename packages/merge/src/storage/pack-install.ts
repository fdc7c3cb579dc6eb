import { randomUUID } from 'node:crypto';
import type * as NodeFs from 'node:fs';
import type { promises as FsPromises } from 'node:fs';
import { PackError } from '../errors';
import { type GitObject, hashObject, type Oid } from '../model/object-format';
import { encodePackIndex, type PackSummary } from '../model/pack-format';
import { type GitDir, loadIsomorphicGit } from './git-dir';

/** A whole object of an installed pack, with its oid. */
export interface InstalledObject {
  oid: Oid;
  object: GitObject;
}

/**
 * Makes a scanned pack readable in `dir`: the pack and its index are built in a staging
 * directory and renamed into `objects/pack`, pack first, index last. Readers find packs by their
 * `.idx`, so a failure at any step leaves nothing that reads as present. Whole-object packs are
 * indexed by our own writer; packs with deltas by isomorphic-git's `indexPack`. Returns the
 * pack's whole objects (none for a pack with deltas), for the caller's read cache, since a
 * closure check usually follows.
 */
export async function installPack(
  dir: GitDir,
  pack: Uint8Array,
  summary: PackSummary,
  /** The entries' object ids, when the caller has hashed them already (whole-object packs). */
  oids?: Oid[],
): Promise<InstalledObject[]> {
  const fsp = (dir.fs as unknown as { promises: typeof FsPromises }).promises;
  const name = `pack-${summary.checksum}`;
  const packDir = `${dir.gitdir}/objects/pack`;
  const whole = summary.entries.every((entry) => entry.object !== undefined);
  const indexed = whole
    ? summary.entries.map((entry, i) => {
        const object = entry.object as GitObject;
        return {
          oid: oids?.[i] ?? hashObject(object.type, object.content),
          offset: entry.offset,
          crc: entry.crc,
          object,
        };
      })
    : [];
  if (whole && pack.byteLength <= SMALL_PACK_BYTES) {
    installSmallPack(dir, pack, encodePackIndex(indexed, summary.checksum), name);
  } else if (!(await exists(fsp, `${packDir}/${name}.idx`))) {
    const stagingRel = `incoming/${randomUUID()}`;
    const staging = `${dir.gitdir}/${stagingRel}`;
    await fsp.mkdir(staging, { recursive: true });
    try {
      await fsp.writeFile(`${staging}/${name}.pack`, pack);
      if (whole)
        await fsp.writeFile(`${staging}/${name}.idx`, encodePackIndex(indexed, summary.checksum));
      else await indexWithIsomorphicGit(dir, `${stagingRel}/${name}.pack`, summary.entries.length);
      await fsp.mkdir(packDir, { recursive: true });
      await fsp.rename(`${staging}/${name}.pack`, `${packDir}/${name}.pack`);
      try {
        await fsp.rename(`${staging}/${name}.idx`, `${packDir}/${name}.idx`);
      } catch (error) {
        // Unreadable without its index anyway; do not leave an orphan behind.
        await fsp.rm(`${packDir}/${name}.pack`, { force: true });
        throw error;
      }
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
    }
  }
  return indexed;
}

/**
 * Up to this size a whole-object pack is installed with synchronous calls: two writes to the
 * page cache take well under a millisecond per MiB, while each asynchronous call waits for a
 * thread-pool slot that concurrent fsyncs (L rewrites, state records, the embedded store) may
 * hold for milliseconds. A contended commit imports one such increment per competing
 * publication, inside its read-current → CAS window; a group's increment (about 500 KiB for 100
 * members on a 100-file directory) is one too.
 */
const SMALL_PACK_BYTES = 4 * 1024 * 1024;

/**
 * The same staged install as the asynchronous path, with temp names inside `objects/pack`
 * (readers look only for `pack-*.idx`): pack renamed in first, index last.
 */
function installSmallPack(dir: GitDir, pack: Uint8Array, index: Uint8Array, name: string): void {
  const fs = dir.fs as unknown as typeof NodeFs;
  const packDir = `${dir.gitdir}/objects/pack`;
  if (fs.existsSync(`${packDir}/${name}.idx`)) return;
  const temp = `${packDir}/incoming-${randomUUID()}`;
  fs.mkdirSync(packDir, { recursive: true });
  try {
    fs.writeFileSync(`${temp}.pack.tmp`, pack);
    fs.writeFileSync(`${temp}.idx.tmp`, index);
    fs.renameSync(`${temp}.pack.tmp`, `${packDir}/${name}.pack`);
    try {
      fs.renameSync(`${temp}.idx.tmp`, `${packDir}/${name}.idx`);
    } catch (error) {
      // Unreadable without its index anyway; do not leave an orphan behind.
      fs.rmSync(`${packDir}/${name}.pack`, { force: true });
      throw error;
    }
  } finally {
    fs.rmSync(`${temp}.pack.tmp`, { force: true });
    fs.rmSync(`${temp}.idx.tmp`, { force: true });
  }
}

async function indexWithIsomorphicGit(dir: GitDir, filepath: string, count: number): Promise<void> {
  const git = await loadIsomorphicGit();
  let indexed: number;
  try {
    const { oids } = await git.indexPack({
      fs: dir.fs,
      dir: dir.gitdir,
      gitdir: dir.gitdir,
      filepath,
      cache: dir.cache,
    });
    indexed = oids.length;
  } catch (cause) {
    throw new PackError(
      'UNRESOLVED_DELTA',
      'pack could not be indexed (a delta base is missing or corrupt)',
      { cause },
    );
  }
  // isomorphic-git leaves objects it cannot resolve out of the index instead of failing.
  if (indexed !== count)
    throw new PackError(
      'UNRESOLVED_DELTA',
      `pack has ${count - indexed} object(s) whose delta base is missing`,
    );
}

async function exists(fsp: typeof FsPromises, path: string): Promise<boolean> {
  try {
    await fsp.stat(path);
    return true;
  } catch {
    return false;
  }
}
