/**
 * Entering a directory (reading its state and deciding whether its baseline can be trusted),
 * and the synchronisation every pull and every repair performs: merge(A, L, R) written to L
 * with R recorded as the new baseline.
 */
import { compareUtf8, engineDetailFor, type FileIssue } from '@slivingdoc/envelope';
import {
  findMarkerBlocks,
  type MergeConflict,
  type TreeEntries,
  verifyClosure,
} from '@slivingdoc/merge';
import type { RewriteTarget } from '@slivingdoc/workspace';
import { type CallState, type DirContext, EMPTY_TREE, NO_FILES } from '../context';
import { engineFailure } from '../errors';
import { FAILPOINT, failpoint } from '../failpoints';
import { type Baseline, EMPTY_BASELINE } from '../notebook/baseline';
import { threeWayMerge } from '../notebook/merge';
import {
  holdsHead,
  loadRemote,
  type RemoteView,
  rememberVerified,
  restoreBaseline,
} from '../notebook/remote';
import { type LocalSnapshot, scanLocal } from './local';
import { rewriteLocal } from './materialize';
import { baselineOf } from './state-record';

/** What a call learns about its directory before touching anything. */
export interface Entry {
  /** The baseline merges use: the recorded one when trustworthy, else the empty tree. */
  base: Baseline;
  baseEntries: TreeEntries;
  /** The recorded baseline for the rolled-back check (absent when state.json is unusable). */
  rollback: Baseline | undefined;
  /** True when a repair must run first: flag set, or state missing, corrupt or incomplete. */
  repairPending: boolean;
  /** True when the state record was missing (a directory never pulled has none). */
  stateMissing: boolean;
  /**
   * What the rewrites and publication attempts since the recorded baseline were writing (absent:
   * none recorded, or the record belongs to another baseline).
   */
  target?: RewriteTarget;
}

/**
 * The recorded baseline's files when P can be trusted with it: a head this process has not yet
 * checked (its first call on the directory, or after a kill left the recovery flag) has its whole
 * closure verified first, then counts as a verified anchor for imports.
 */
async function trustworthyEntries(
  ctx: DirContext,
  baseline: Baseline,
  flagged: boolean,
): Promise<TreeEntries | undefined> {
  if (baseline.head === '') return NO_FILES;
  try {
    if (flagged || !ctx.objects.verifiedHeads.has(baseline.head)) {
      await verifyClosure(ctx.db, baseline.head);
      rememberVerified(ctx, baseline.head);
    }
    return await ctx.trees.read(ctx.db, baseline.tree);
  } catch {
    return undefined;
  }
}

/** The targets recorded since the recorded baseline (else none). */
async function recordedTarget(
  ctx: DirContext,
  recorded: Baseline,
): Promise<RewriteTarget | undefined> {
  const target = await ctx.priv.readTarget().catch(() => undefined);
  if (target === undefined) return undefined;
  const { previous } = target;
  const matches =
    previous.generation === recorded.generation &&
    previous.head === recorded.head &&
    previous.tree === recorded.tree;
  return matches ? target : undefined;
}

/**
 * Reads state.json. Missing or corrupt state, or a baseline whose objects P lacks and the store
 * cannot restore, means "no trustworthy baseline" (merge against the empty tree); only an
 * unreadable P is an error. The entry brings the targets recorded since that baseline.
 */
export async function enterDirectory(ctx: DirContext): Promise<Entry> {
  let state: Awaited<ReturnType<typeof ctx.priv.readState>>;
  try {
    state = await ctx.priv.readState();
  } catch (err) {
    if (engineDetailFor(err) !== undefined) throw engineFailure(err, 'private');
    return {
      base: EMPTY_BASELINE,
      baseEntries: NO_FILES,
      rollback: undefined,
      repairPending: true,
      stateMissing: false,
    };
  }
  if (state === undefined) {
    return {
      base: EMPTY_BASELINE,
      baseEntries: NO_FILES,
      rollback: undefined,
      repairPending: true,
      stateMissing: true,
    };
  }
  const recorded = baselineOf(state);
  const flagged = state.recoveryRequired;
  const target = await recordedTarget(ctx, recorded);
  let entries = await trustworthyEntries(ctx, recorded, flagged);
  // Objects P lost (a process killed mid-write, a damaged P) come back from the store when it
  // still holds the recorded head; a failure there leaves the baseline untrusted.
  if (entries === undefined && (await restoreBaseline(ctx, recorded).catch(() => false)))
    entries = await trustworthyEntries(ctx, recorded, true);
  if (entries === undefined) {
    return {
      base: EMPTY_BASELINE,
      baseEntries: NO_FILES,
      rollback: recorded,
      repairPending: true,
      stateMissing: false,
      ...(target === undefined ? {} : { target }),
    };
  }
  return {
    base: recorded,
    baseEntries: entries,
    rollback: recorded,
    repairPending: flagged,
    stateMissing: false,
    ...(target === undefined ? {} : { target }),
  };
}

/**
 * The tree a killed call was writing into L. Its objects come back from the store when this
 * database lacks them, as a baseline's do (a hub restarted on another database); undefined when
 * they cannot (a proposal that was never published), and the repair measures from the old base.
 */
async function rewrittenTree(ctx: DirContext, next: Baseline): Promise<TreeEntries | undefined> {
  if (next.tree === EMPTY_TREE) return NO_FILES;
  const read = () => ctx.trees.read(ctx.db, next.tree);
  try {
    return await read();
  } catch {
    if (!(await restoreBaseline(ctx, next).catch(() => false))) return undefined;
    return await read().catch(() => undefined);
  }
}

/**
 * The base a repair merges L against (contract §10). A file that equals what the killed call was
 * writing (its recorded target, absence included) was written, or left as it was, by that call:
 * its local change is measured from the baseline that call was recording, so its own output is
 * never taken for the caller's edit. Every other file is measured from the flagged baseline as
 * before, so the caller's bytes are kept either way. Returns the base and the paths whose base
 * came from the target.
 */
async function repairBase(
  ctx: DirContext,
  entry: Entry,
  local: TreeEntries,
  remote: RemoteView,
): Promise<{ base: TreeEntries; fromTarget: Set<string> }> {
  const fromTarget = new Set<string>();
  const base = new Map(entry.baseEntries);
  const decided = new Set<string>();
  // Newest first: a file equal to a later rewrite's target was written (or kept) by it.
  for (const rewrite of [...(entry.target?.rewrites ?? [])].reverse()) {
    if (rewrite.input === true) {
      // A landed attempt's input is published: a file still equal to it is no edit. Its
      // changes are relative to the recorded baseline, so only a trusted one can place them.
      if (entry.base !== entry.rollback || !holdsHead(remote.current, rewrite.next.head)) continue;
      for (const [path, oid] of rewrite.changes) {
        if (decided.has(path) || local.get(path) !== (oid ?? undefined)) continue;
        decided.add(path);
        if (oid === null) base.delete(path);
        else base.set(path, oid);
      }
      continue;
    }
    const next = await rewrittenTree(ctx, rewrite.next);
    if (next === undefined) continue;
    const targetOid = (path: string) => {
      const change = rewrite.changes.get(path);
      return change === undefined ? next.get(path) : (change ?? undefined);
    };
    for (const path of new Set([...local.keys(), ...next.keys(), ...rewrite.changes.keys()])) {
      if (decided.has(path) || local.get(path) !== targetOid(path)) continue;
      decided.add(path);
      const nextOid = next.get(path);
      if (nextOid === entry.baseEntries.get(path)) continue;
      // Content the base must offer to a text merge has to be in P; else keep the old base.
      if (nextOid !== undefined && !(await ctx.db.has(nextOid))) continue;
      if (nextOid === undefined) base.delete(path);
      else base.set(path, nextOid);
      fromTarget.add(path);
    }
  }
  return { base, fromTarget };
}

/**
 * Merge conflicts as the envelope's file issues, one per path, sorted by UTF-8 bytes. A text
 * conflict's ranges are the marker blocks the documented scanner (contract §6) finds in the file as
 * materialised in `final`: the caller's concurrent edits or an old block can make them differ
 * from what the merge counted, and they must be the blocks a later commit refuses.
 */
export async function conflictIssues(
  ctx: DirContext,
  conflicts: MergeConflict[],
  final: TreeEntries,
): Promise<FileIssue[]> {
  const byPath = new Map<string, FileIssue>();
  for (const c of conflicts) {
    let ranges = c.ranges.map((r) => ({ start: r.start, end: r.end }));
    const oid = final.get(c.path);
    if (c.reason === 'TEXT_CONFLICT' && oid !== undefined)
      ranges = findMarkerBlocks(await ctx.db.readBlob(oid));
    byPath.set(c.path, { path: c.path, reason: c.reason, ranges });
  }
  return [...byPath.values()].sort((a, b) => compareUtf8(a.path, b.path));
}

/**
 * Conflicts a killed call had written and that are still there: files the repair took from its
 * target that hold marker blocks the baseline it was recording did not (reported, not re-merged).
 */
async function leftoverConflicts(
  ctx: DirContext,
  paths: Set<string>,
  final: TreeEntries,
  next: TreeEntries,
): Promise<MergeConflict[]> {
  const conflicts: MergeConflict[] = [];
  for (const path of paths) {
    const oid = final.get(path);
    if (oid === undefined || oid === next.get(path)) continue;
    const ranges = findMarkerBlocks(await ctx.db.readBlob(oid));
    if (ranges.length > 0) conflicts.push({ path, reason: 'TEXT_CONFLICT', ranges });
  }
  return conflicts;
}

/** The outcome of one synchronisation. */
export interface Synchronized {
  local: LocalSnapshot;
  remote: RemoteView;
  final: TreeEntries;
  conflicts: MergeConflict[];
}

/**
 * merge(A, L, R) written to L, R recorded as the baseline. With `tolerant`, files that are not
 * notebook state are left alone (a repair must finish); otherwise the caller has already
 * rejected them. `local` may be passed when the caller scanned already.
 */
export async function synchronize(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  opts: { local?: LocalSnapshot },
): Promise<Synchronized> {
  call.stage = 'scan';
  const local = opts.local ?? (await scanLocal(ctx));
  const remote = await loadRemote(ctx, call, entry.rollback);
  call.stage = 'merge';
  const repair = await repairBase(ctx, entry, local.entries, remote);
  // Without a baseline (first pull of a directory holding files, lost or corrupt state) no
  // file is known to be an addition: every differing file comes back as the explicit add/add
  // conflict of contract §10, whatever --merge-additions says (docs/merge.md).
  const noBaseline = entry.base === EMPTY_BASELINE;
  const merged = await threeWayMerge(
    ctx,
    repair.base,
    local.entries,
    remote.entries,
    noBaseline ? 'conflict' : ctx.cfg.mergeAdditions,
  );
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterMerge);
  call.signal?.throwIfAborted();
  // R's objects may be staged in memory: on disk before the baseline names them.
  await ctx.db.persistStaged();
  const written = await rewriteLocal(ctx, call, {
    local,
    target: merged.result,
    previous: entry.rollback ?? EMPTY_BASELINE,
    next: remote.baseline,
    keep: new Set(local.problems.map((p) => p.path)),
  });
  const leftover = await leftoverConflicts(ctx, repair.fromTarget, written.final, remote.entries);
  return {
    local,
    remote,
    final: written.final,
    conflicts: [...merged.conflicts, ...written.conflicts, ...leftover],
  };
}
