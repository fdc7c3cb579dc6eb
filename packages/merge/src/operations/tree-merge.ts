import type { Oid } from '../model/object-format';
import type { ObjectDb, TreeEntries } from '../storage/object-db';
import { compareUtf8 } from './diffstat';
import { type LineRange, type MergeAdditions, mergeAdded, mergeText } from './text-merge';

/** Why a path did not merge cleanly (file reasons of contract §3). */
export type MergeConflictReason =
  | 'TEXT_CONFLICT'
  | 'MODIFY_DELETE'
  | 'FILE_DIRECTORY'
  | 'NAME_COLLISION';

/** One path that needs the caller's attention after a merge. */
export interface MergeConflict {
  /** For moves (FILE_DIRECTORY, NAME_COLLISION): the path where local and remote collided. */
  path: string;
  reason: MergeConflictReason;
  /**
   * Marker blocks in the written content as `findMarkerBlocks` finds them (TEXT_CONFLICT only),
   * one-based inclusive.
   */
  ranges: LineRange[];
}

/** Inputs of {@link merge3}. */
export interface Merge3Input {
  /** A: the accepted baseline. */
  base: TreeEntries;
  /** L: the caller's files. */
  local: TreeEntries;
  /** R: the latest accepted remote. */
  remote: TreeEntries;
  /** Where content is read and merged blobs are written. */
  db: ObjectDb;
  /**
   * Full Unicode case folding of a notebook path after NFC, per segment (the policy package's
   * `foldKey`). Injected so the merge engine and the path rules share one folding table.
   */
  foldKey: (path: string) => string;
  /**
   * Concurrent insertions at the same place of a file, and add/add of one path (contract §6):
   * `keep` (default) keeps both sides without markers, `conflict` is git's rule.
   */
  additions?: MergeAdditions;
}

const LOCAL_SUFFIX = '~local';

/**
 * Three-way merge of whole trees by the per-path rules of contract §6. Paths whose oids agree are
 * decided without reading content; only paths changed on both sides are read and merged.
 * Results that came from the local side and collide with R's paths (file against directory, or
 * equal under case folding) move to `<path>~local`, `~local2`, … while R keeps the path.
 */
export async function merge3(
  input: Merge3Input,
): Promise<{ result: TreeEntries; conflicts: MergeConflict[] }> {
  const { base, local, remote, db } = input;
  const options = { additions: input.additions ?? 'keep' };
  // One side unchanged (nearly every call): the other side is the result, shared rather than
  // rebuilt path by path. Results are read-only for callers, like the inputs.
  if (sameEntries(local, base)) return { result: remote, conflicts: [] };
  const result: TreeEntries = sameEntries(remote, base) ? local : new Map();
  const conflicts = new Map<string, MergeConflict>();
  const decide = async (
    path: string,
    a: Oid | undefined,
    l: Oid | undefined,
    r: Oid | undefined,
  ) => {
    let merged: Oid | undefined;
    if (l === r || l === a) merged = r;
    else if (r === a) merged = l;
    else if (l === undefined || r === undefined) {
      merged = l ?? r;
      conflicts.set(path, { path, reason: 'MODIFY_DELETE', ranges: [] });
    } else {
      const [localBytes, remoteBytes] = [await db.readBlob(l), await db.readBlob(r)];
      const text =
        a === undefined
          ? mergeAdded(localBytes, remoteBytes, options)
          : mergeText(await db.readBlob(a), localBytes, remoteBytes, options);
      merged = await db.writeBlob(text.content);
      if (text.conflicted)
        conflicts.set(path, { path, reason: 'TEXT_CONFLICT', ranges: text.conflicts });
    }
    if (merged !== undefined) result.set(path, merged);
  };
  // With R = A every path's rule picks L's side: the result is L. Otherwise every path once,
  // local's first, then remote's, then base's, without building their union.
  if (result !== local) {
    for (const [path, l] of local) {
      const r = remote.get(path);
      if (l === r) result.set(path, r);
      else await decide(path, base.get(path), l, r);
    }
    for (const [path, r] of remote)
      if (!local.has(path)) await decide(path, base.get(path), undefined, r);
    for (const [path, a] of base)
      if (!local.has(path) && !remote.has(path)) await decide(path, a, undefined, undefined);
  }
  const moved = moveCollidingLocalPaths(result, remote, input.foldKey);
  for (const [path, reason] of moved.collisions) conflicts.set(path, { path, reason, ranges: [] });
  return {
    result: moved.result,
    conflicts: [...conflicts.values()].sort((x, y) => compareUtf8(x.path, y.path)),
  };
}

/** True when both trees hold the same paths with the same blobs. */
export function sameEntries(a: TreeEntries, b: TreeEntries): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [path, oid] of a) if (b.get(path) !== oid) return false;
  return true;
}

/** Every proper directory prefix of `path` and then the path itself. */
function prefixesOf(path: string): string[] {
  const prefixes: string[] = [];
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1))
    prefixes.push(path.slice(0, at));
  prefixes.push(path);
  return prefixes;
}

type Collision = { at: string; reason: 'FILE_DIRECTORY' | 'NAME_COLLISION' };

/** R's paths that a result keeps: their files, directories and folded forms (first spelling). */
interface Anchors {
  files: Set<string>;
  dirs: Set<string>;
  folded: Map<string, string>;
}

/** Indexes the result's paths that R holds, those `relevant` accepts (default all). */
function indexAnchors(
  result: TreeEntries,
  remote: TreeEntries,
  foldKey: (path: string) => string,
  relevant: (path: string) => boolean = () => true,
): Anchors {
  const anchors: Anchors = { files: new Set(), dirs: new Set(), folded: new Map() };
  for (const path of result.keys()) {
    if (!remote.has(path) || !relevant(path)) continue;
    anchors.files.add(path);
    for (const prefix of prefixesOf(path)) {
      if (prefix !== path) anchors.dirs.add(prefix);
      const folded = foldKey(prefix);
      if (!anchors.folded.has(folded)) anchors.folded.set(folded, prefix);
    }
  }
  return anchors;
}

/** Where `path` first collides with an anchor (file against directory, or folded name). */
function collisionOf(
  path: string,
  anchors: Anchors,
  foldKey: (path: string) => string,
): Collision | undefined {
  for (const prefix of prefixesOf(path)) {
    const isDir = prefix !== path;
    if (isDir ? anchors.files.has(prefix) : anchors.dirs.has(prefix))
      return { at: prefix, reason: 'FILE_DIRECTORY' };
    const owner = anchors.folded.get(foldKey(prefix));
    if (owner !== undefined && owner !== prefix) return { at: prefix, reason: 'NAME_COLLISION' };
  }
  return undefined;
}

/**
 * Whether any movable path collides at all, from the anchors that can matter: a collision at
 * any depth needs equal folded first segments (folding is per segment), and the anchors'
 * first-seen spellings keep their order, so this finds a collision exactly when the full index
 * would. Folds one first segment per distinct spelling instead of every prefix of every path:
 * adding one file to a 10,000-file notebook no longer folds 20,000 prefixes.
 */
function anyCollision(
  movable: string[],
  result: TreeEntries,
  remote: TreeEntries,
  foldKey: (path: string) => string,
): boolean {
  const firstSegment = (path: string) => {
    const slash = path.indexOf('/');
    return slash < 0 ? path : path.slice(0, slash);
  };
  const wanted = new Set(movable.map((path) => foldKey(firstSegment(path))));
  const foldedFirst = new Map<string, string>();
  const relevant = (path: string) => {
    const segment = firstSegment(path);
    let folded = foldedFirst.get(segment);
    if (folded === undefined) {
      folded = foldKey(segment);
      foldedFirst.set(segment, folded);
    }
    return wanted.has(folded);
  };
  const anchors = indexAnchors(result, remote, foldKey, relevant);
  return movable.some((path) => collisionOf(path, anchors, foldKey) !== undefined);
}

/**
 * Moves result paths that are not R's (they came from the local side) away from R's paths they
 * collide with. Returns the result (a copy when anything moved: `merged` may be the caller's L)
 * and the collision points with their reasons.
 */
function moveCollidingLocalPaths(
  merged: TreeEntries,
  remote: TreeEntries,
  foldKey: (path: string) => string,
): { result: TreeEntries; collisions: Map<string, 'FILE_DIRECTORY' | 'NAME_COLLISION'> } {
  let result = merged;
  const movable = [...result.keys()].filter((path) => !remote.has(path)).sort();
  const collisions = new Map<string, 'FILE_DIRECTORY' | 'NAME_COLLISION'>();
  if (movable.length === 0 || !anyCollision(movable, result, remote, foldKey))
    return { result, collisions };
  // The full index: a renamed target may collide with anchors under any first segment.
  const anchors = indexAnchors(result, remote, foldKey);
  const taken = (candidate: string): boolean =>
    result.has(candidate) ||
    anchors.dirs.has(candidate) ||
    anchors.folded.has(foldKey(candidate)) ||
    [...result.keys()].some((path) => path.startsWith(`${candidate}/`));
  const renames = new Map<string, string>();
  for (const path of movable) {
    const hit = collisionOf(path, anchors, foldKey);
    if (!hit) continue;
    let target = renames.get(hit.at);
    if (target === undefined) {
      for (let n = 1; target === undefined || taken(target); n++)
        target = `${hit.at}${LOCAL_SUFFIX}${n === 1 ? '' : n}`;
      renames.set(hit.at, target);
      collisions.set(hit.at, hit.reason);
    }
    if (result === merged) result = new Map(merged);
    const oid = result.get(path) as Oid;
    result.delete(path);
    result.set(target + path.slice(hit.at.length), oid);
  }
  return { result, collisions };
}
