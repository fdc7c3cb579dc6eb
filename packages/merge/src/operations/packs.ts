import { isUtf8 } from 'node:buffer';
import { ClosureError, type InvalidBlob, ObjectMissingError } from '../errors';
import { decodeCommit } from '../model/commit-codec';
import type { GitObject, Oid } from '../model/object-format';
import { encodePack } from '../model/pack-format';
import { DIR_MODE, type TreeObjectEntry } from '../model/tree-codec';
import type { ObjectDb, StageOption } from '../storage/object-db';

/** Collects whole objects for a pack, each once, in walk order. */
class PackCollector {
  readonly objects: GitObject[] = [];
  readonly #seen = new Set<Oid>();
  constructor(readonly db: ObjectDb) {}

  /** Adds the object once; returns false when it was already collected. */
  async add(oid: Oid): Promise<boolean> {
    if (this.#seen.has(oid)) return false;
    this.#seen.add(oid);
    const found = await this.db.readObject(oid);
    if (!found) throw new ObjectMissingError(oid);
    this.objects.push(found);
    return true;
  }
}

/** How many commits one increment pack may chain (a group commit holds one per member). */
const MAX_CHAINED_COMMITS = 1024;

/**
 * A pack of the objects reachable from `head` that are new relative to `parentHead`'s state:
 * the head commit, then only trees and blobs whose oid differs from the entry at the same path in
 * the parent's tree. Unchanged subtrees are skipped by oid without being read, so a one-file
 * change in a 10,000-file notebook reads a handful of trees. When `head` descends from
 * `parentHead` through several commits (a group commit: one per member), every commit of the
 * chain is included with what it adds relative to its own parent, so the history is complete.
 */
export async function createIncrementPack(
  db: ObjectDb,
  opts: { head: Oid; parentHead: Oid },
): Promise<Uint8Array> {
  const collector = new PackCollector(db);
  let oid = opts.head;
  for (let chained = 0; ; chained += 1) {
    if (chained >= MAX_CHAINED_COMMITS)
      throw new ObjectMissingError(opts.parentHead, 'increment chain too long');
    const commit = await db.readCommit(oid);
    if (commit.parent === undefined) throw new ObjectMissingError(opts.parentHead);
    const parent = await db.readCommit(commit.parent);
    await collector.add(oid);
    await collectTreeDiff(collector, commit.tree, parent.tree);
    if (commit.parent === opts.parentHead) break;
    oid = commit.parent;
  }
  return encodePack(collector.objects);
}

async function collectTreeDiff(
  collector: PackCollector,
  tree: Oid,
  oldTree: Oid | undefined,
): Promise<void> {
  if (tree === oldTree || !(await collector.add(tree))) return;
  const oldEntries = new Map<string, TreeObjectEntry>();
  if (oldTree)
    for (const entry of await collector.db.readTreeObject(oldTree))
      oldEntries.set(entry.name, entry);
  for (const entry of await collector.db.readTreeObject(tree)) {
    const old = oldEntries.get(entry.name);
    if (old && old.oid === entry.oid && old.mode === entry.mode) continue;
    if (entry.mode === DIR_MODE)
      await collectTreeDiff(collector, entry.oid, old?.mode === DIR_MODE ? old.oid : undefined);
    else await collector.add(entry.oid);
  }
}

/**
 * A closed pack of `head`: the commit, every tree and every blob of its state, all whole
 * objects (no delta base outside the pack). The commit's parent is not included: it is the
 * declared shallow boundary.
 */
export async function createCheckpointPack(db: ObjectDb, opts: { head: Oid }): Promise<Uint8Array> {
  const collector = new PackCollector(db);
  const head = await db.readCommit(opts.head);
  await collector.add(opts.head);
  await collectTreeDiff(collector, head.tree, undefined);
  return encodePack(collector.objects);
}

/**
 * Verifies `pack` and makes it readable in `db` (or holds it in memory, `staged`): the storage's
 * own {@link ObjectDb.importPack}, offered beside the other pack operations. Throws
 * {@link PackError}.
 */
export function importPack(db: ObjectDb, pack: Uint8Array, opts: StageOption = {}): Promise<void> {
  return db.importPack(pack, opts);
}

/**
 * Proves `head`'s closure is present and is notebook state: the commit, every tree, every blob,
 * each blob valid UTF-8 without U+0000. Walks everything (does not stop at the first gap) and
 * throws one {@link ClosureError} listing every missing object and invalid blob. An object that
 * is present but unreadable (a torn loose file) counts as missing. Foreign tree modes or names
 * throw TreeError.
 */
export async function verifyClosure(db: ObjectDb, head: Oid): Promise<void> {
  const missing: Oid[] = [];
  const invalid: InvalidBlob[] = [];
  const seen = new Set<Oid>();
  const read = async (
    oid: Oid,
    type: 'commit' | 'tree' | 'blob',
  ): Promise<Uint8Array | undefined> => {
    try {
      const found = await db.readObject(oid);
      if (found && found.type === type) return found.content;
    } catch {
      // An unreadable object is as good as absent: the caller refetches or repairs.
    }
    missing.push(oid);
    return undefined;
  };
  const walk = async (tree: Oid, prefix: string): Promise<void> => {
    if (seen.has(tree)) return;
    seen.add(tree);
    if (!(await read(tree, 'tree'))) return;
    for (const entry of await db.readTreeObject(tree, prefix)) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.mode === DIR_MODE) {
        await walk(entry.oid, path);
        continue;
      }
      if (seen.has(entry.oid)) continue;
      seen.add(entry.oid);
      const blob = await read(entry.oid, 'blob');
      if (!blob) continue;
      if (!isUtf8(blob)) invalid.push({ oid: entry.oid, path, problem: 'NOT_UTF8' });
      else if (blob.includes(0)) invalid.push({ oid: entry.oid, path, problem: 'CONTAINS_NUL' });
    }
  };
  const commit = await read(head, 'commit');
  if (commit) await walk(decodeCommit(commit).tree, '');
  if (missing.length > 0 || invalid.length > 0) throw new ClosureError(missing, invalid);
}
