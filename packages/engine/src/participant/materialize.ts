/**
 * Rewriting L to a target tree, inside the recovery flag (contract §10): flag raised durably,
 * L written, the new baseline recorded and the flag cleared in one atomic state write.
 * A file the caller edits meanwhile is never overwritten: the write fails on its stamp, L is
 * rescanned and the caller's new edits are merged onto the target before writing again.
 */
import type { MergeConflict, TreeEntries } from '@slivingdoc/merge';
import {
  type FileChange,
  type TargetRewrite,
  type WrittenFile,
  writeChanges,
} from '@slivingdoc/workspace';
import { type CallState, type DirContext, EMPTY_TREE, NO_FILES } from '../context';
import { FAILPOINT, failpoint } from '../failpoints';
import type { Baseline } from '../notebook/baseline';
import { threeWayMerge } from '../notebook/merge';
import { reportProgress } from '../progress';
import { type LocalSnapshot, scanLocal } from './local';
import { raiseRecoveryFlag, recordBaseline } from './state-record';

const CONCURRENT_EDIT_ROUNDS = 4;

/** Rewrites and attempts one target record remembers (kills one after another, in a row). */
const TARGETS_KEPT = 8;

/** The file writes that turn `local` into `target`, leaving `keep` paths alone. */
async function changesFor(
  ctx: DirContext,
  local: LocalSnapshot,
  target: TreeEntries,
  keep: Set<string>,
): Promise<FileChange[]> {
  // The merge hands back L's own map when L already is the target (a commit on an unchanged R):
  // every scanned file is in it with its blob, so there is nothing to write or delete.
  if (target === local.entries) return [];
  const changes: FileChange[] = [];
  for (const [path, file] of local.files) {
    if (!keep.has(path) && !target.has(path))
      changes.push({ path, content: null, expect: file.stamp });
  }
  for (const [path, oid] of target) {
    if (keep.has(path) || local.entries.get(path) === oid) continue;
    changes.push({
      path,
      content: await ctx.db.readBlob(oid),
      expect: local.files.get(path)?.stamp ?? 'absent',
    });
  }
  return changes;
}

/** Writes the changes in two halves, so the mid-materialize failpoint sees a half-written L. */
async function writeInHalves(ctx: DirContext, changes: FileChange[]): Promise<WrittenFile[]> {
  let done = 0;
  const progress = { onStaged: () => reportProgress('write', ++done, changes.length) };
  const middle = Math.ceil(changes.length / 2);
  const written = await writeChanges(ctx.dir, changes.slice(0, middle), progress);
  await failpoint(ctx.cfg.failpoints, FAILPOINT.midMaterialize);
  if (middle < changes.length)
    written.push(...(await writeChanges(ctx.dir, changes.slice(middle), progress)));
  return written;
}

/**
 * Records the files just written in the stat cache with the blob ids they were written from,
 * so the next scan does not read back (and re-hash) a whole freshly pulled notebook.
 */
async function rememberWritten(
  ctx: DirContext,
  written: WrittenFile[],
  target: TreeEntries,
): Promise<void> {
  let changed = false;
  for (const file of written) {
    const oid = target.get(file.path);
    if (oid === undefined) continue;
    ctx.priv.statCache.set(file.path, file.stamp, oid);
    changed = true;
  }
  if (changed) await ctx.priv.statCache.save();
}

/**
 * Appends one rewrite (or publication attempt) to the target record of `previous` (contract §10):
 * every rewrite and attempt since `previous` was recorded stays listed (bounded), because L may
 * hold files of each of them when a process is killed.
 */
async function appendTarget(
  ctx: DirContext,
  previous: Baseline,
  rewrite: TargetRewrite,
): Promise<void> {
  const found = await ctx.priv.readTarget().catch(() => undefined);
  const same =
    found !== undefined &&
    found.previous.generation === previous.generation &&
    found.previous.head === previous.head &&
    found.previous.tree === previous.tree;
  const kept = same ? found.rewrites.slice(-(TARGETS_KEPT - 1)) : [];
  await ctx.priv.writeTarget({ previous, rewrites: [...kept, rewrite] });
}

/** The differences of `to` from `from` (path → blob id, `null` = absent). */
function differences(from: TreeEntries, to: TreeEntries): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  if (to === from) return changes;
  for (const [path, oid] of to) if (from.get(path) !== oid) changes.set(path, oid);
  for (const path of from.keys()) if (!to.has(path)) changes.set(path, null);
  return changes;
}

/**
 * Records what this rewrite is about to write, before any file of L changes: the target as its
 * difference from `next`'s tree, so the record stays as small as the caller's unpublished edits.
 */
async function recordTarget(
  ctx: DirContext,
  opts: { previous: Baseline; next: Baseline },
  target: TreeEntries,
): Promise<void> {
  const { next } = opts;
  const nextEntries = next.tree === EMPTY_TREE ? NO_FILES : await ctx.trees.read(ctx.db, next.tree);
  await appendTarget(ctx, opts.previous, { next, changes: differences(nextEntries, target) });
}

/**
 * Records a publication attempt's input just before its compare-and-swap: a process killed after
 * the swap landed but before it recorded anything leaves L as it merged it, and the next call must
 * not publish those files' lines a second time.
 */
export async function recordPublicationInput(
  ctx: DirContext,
  opts: { previous: Baseline; previousEntries: TreeEntries; proposal: Baseline },
  input: TreeEntries,
): Promise<void> {
  await appendTarget(ctx, opts.previous, {
    next: opts.proposal,
    changes: differences(opts.previousEntries, input),
    input: true,
  });
}

function isConcurrentEdit(err: unknown): boolean {
  return (err as Error | undefined)?.name === 'ConcurrentEditError';
}

/** What L became. */
export interface Materialized {
  /** L's tree after the rewrite (the target plus any edits the caller made meanwhile). */
  final: TreeEntries;
  /** Conflicts between the caller's concurrent edits and the target (markers written). */
  conflicts: MergeConflict[];
}

/**
 * Rewrites L from `local` to `target` and records `next` as the baseline. The target is recorded
 * first, then `previous` is kept in the flagged state, so a repair after a crash has a
 * trustworthy base and knows which files this call wrote. `keep` lists paths that
 * must never be written (files that are not notebook state).
 */
export async function rewriteLocal(
  ctx: DirContext,
  call: CallState,
  opts: {
    local: LocalSnapshot;
    target: TreeEntries;
    previous: Baseline;
    next: Baseline;
    keep?: Set<string>;
  },
): Promise<Materialized> {
  call.stage = 'materialize';
  await recordTarget(ctx, opts, opts.target);
  await raiseRecoveryFlag(ctx, call, opts.previous);
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterRecoveryFlag);
  const keep = opts.keep ?? new Set<string>();
  let local = opts.local;
  let target = opts.target;
  const conflicts: MergeConflict[] = [];
  for (let round = 1; ; round += 1) {
    try {
      // A re-merged target (the caller edited meanwhile) is recorded before it is written;
      // files of the earlier round may already be on disk, so its entry stays.
      if (round > 1) await recordTarget(ctx, opts, target);
      const written = await writeInHalves(ctx, await changesFor(ctx, local, target, keep));
      await rememberWritten(ctx, written, target);
      break;
    } catch (err) {
      if (!isConcurrentEdit(err) || round >= CONCURRENT_EDIT_ROUNDS) throw err;
      const rescanned = await scanLocal(ctx);
      for (const problem of rescanned.problems) keep.add(problem.path);
      const merged = await threeWayMerge(ctx, local.entries, rescanned.entries, target);
      conflicts.push(...merged.conflicts);
      local = rescanned;
      target = merged.result;
    }
  }
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterMaterialize);
  call.stage = 'record';
  await recordBaseline(ctx, call, opts.next);
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterBaselineWrite);
  return { final: target, conflicts };
}
