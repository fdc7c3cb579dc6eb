/**
 * Entering a directory (reading its state and deciding whether its baseline can be trusted),
 * and the synchronisation every pull and every repair performs: merge(A, L, R) written to L
 * with R recorded as the new baseline.
 */
import { compareUtf8, engineDetailFor, type FileIssue } from '@slivingdoc/envelope';
import { type MergeConflict, type TreeEntries, verifyClosure } from '@slivingdoc/merge';
import { type Baseline, baselineOf, EMPTY_BASELINE } from './baseline';
import type { CallState, DirContext } from './context';
import { NO_FILES } from './context';
import { engineFailure } from './errors';
import { FAILPOINT, failpoint } from './failpoints';
import { type LocalSnapshot, scanLocal } from './local';
import { rewriteLocal } from './materialize';
import { loadRemote, type RemoteView } from './remote';
import { threeWayMerge } from './three-way';

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
}

async function trustworthyEntries(
  ctx: DirContext,
  baseline: Baseline,
  deep: boolean,
): Promise<TreeEntries | undefined> {
  if (baseline.head === '') return NO_FILES;
  try {
    if (deep) await verifyClosure(ctx.db, baseline.head);
    return await ctx.trees.read(ctx.db, baseline.tree);
  } catch {
    return undefined;
  }
}

/**
 * Reads state.json. Missing or corrupt state, or a baseline whose objects P lacks, means "no
 * trustworthy baseline" (merge against the empty tree); only an unreadable P is an error.
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
  const entries = await trustworthyEntries(ctx, recorded, state.recoveryRequired);
  if (entries === undefined) {
    return {
      base: EMPTY_BASELINE,
      baseEntries: NO_FILES,
      rollback: recorded,
      repairPending: true,
      stateMissing: false,
    };
  }
  return {
    base: recorded,
    baseEntries: entries,
    rollback: recorded,
    repairPending: state.recoveryRequired,
    stateMissing: false,
  };
}

/** Merge conflicts as the envelope's file issues, sorted by UTF-8 bytes. */
export function conflictIssues(conflicts: MergeConflict[]): FileIssue[] {
  return conflicts
    .map((c) => ({
      path: c.path,
      reason: c.reason,
      ranges: c.ranges.map((r) => ({ start: r.start, end: r.end })),
    }))
    .sort((a, b) => compareUtf8(a.path, b.path));
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
  // Without a baseline (first pull of a directory holding files, lost or corrupt state) no
  // file is known to be an addition: every differing file comes back as the explicit add/add
  // conflict of SPEC §10, whatever --merge-additions says (docs/merge.md).
  const noBaseline = entry.base === EMPTY_BASELINE;
  const merged = await threeWayMerge(
    ctx,
    entry.baseEntries,
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
  return {
    local,
    remote,
    final: written.final,
    conflicts: [...merged.conflicts, ...written.conflicts],
  };
}
