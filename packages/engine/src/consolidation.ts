/**
 * Keeps P's object database bounded (docs/engine.md "Bounded private state"): after a call, under
 * the directory's lock, the merge package consolidates it once its loose objects or packs cross
 * the thresholds, keeping what the roots below reach and dropping the rest.
 */
import type { ConsolidationRoots, ConsolidationStep } from '@slivingdoc/merge';
import type { DirContext } from './context';
import { FAILPOINT, type FailpointName } from './failpoints';

/**
 * Everything P must keep readable (contract §10): the recorded baseline; every baseline and
 * target blob of the target record (what a repair after a kill reads); the heads this process
 * verified (the anchors of incremental imports: a pruned anchor would let an import skip blobs
 * it no longer has); the heads background work holds (a checkpoint's prefix); the blobs the
 * stat cache names (a scan trusts them without reading the file). A shared database (one per
 * process, several directories) takes the union of every directory's roots.
 */
export async function privateRoots(ctx: DirContext): Promise<ConsolidationRoots> {
  const roots: string[] = [...ctx.verifiedHeads, ...ctx.pinnedHeads];
  const objects: string[] = [];
  if (ctx.maintenance.prefixHead !== undefined) roots.push(ctx.maintenance.prefixHead);
  const state = await ctx.priv.readState().catch(() => undefined);
  if (state !== undefined) roots.push(state.baselineHead, state.baselineTree);
  const target = await ctx.priv.readTarget().catch(() => undefined);
  if (target !== undefined) {
    roots.push(target.previous.head, target.previous.tree);
    for (const rewrite of target.rewrites) {
      roots.push(rewrite.next.head, rewrite.next.tree);
      for (const blob of rewrite.changes.values()) if (blob !== null) objects.push(blob);
    }
  }
  // Blobs are kept without being read: a 10,000-file directory names 10,000 of them.
  objects.push(...ctx.priv.statCache.ids());
  return { closures: roots, objects };
}

const STEPS: Record<ConsolidationStep, FailpointName> = {
  'after-pack-written': FAILPOINT.consolidationAfterPackWritten,
  'after-indexes-removed': FAILPOINT.consolidationAfterIndexesRemoved,
  'after-files-removed': FAILPOINT.consolidationAfterFilesRemoved,
};

/**
 * Consolidates P when the thresholds say so; never throws. A failure (a full disk, a
 * permission) is logged with its code only and left for a later call: P keeps working as it
 * is, and the calls fail only if they cannot be served. The one info record per consolidation
 * carries counts, sizes and time, never a path or an object id.
 */
export async function maintainPrivateState(ctx: DirContext): Promise<void> {
  try {
    const report = await ctx.db.consolidate({
      roots: () => privateRoots(ctx),
      full: ctx.cfg.consolidateAlways,
      step: (name) => ctx.cfg.failpoints.hit(STEPS[name]),
    });
    if (report === undefined) return;
    ctx.cfg.logger.info(
      {
        consolidation: {
          took: report.took,
          written: report.written,
          freed: {
            objects: report.dropped,
            bytes: Math.max(0, report.before.bytes - report.after.bytes),
          },
          after: {
            objects: report.after.objects,
            packs: report.after.packs,
            bytes: report.after.bytes,
          },
          repaired: report.repaired,
          durationMs: Math.round(report.ms * 10) / 10,
        },
      },
      'private state consolidated',
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    ctx.cfg.logger.warn(
      { code: typeof code === 'string' ? code : 'UNKNOWN' },
      'private state consolidation failed; a later call tries again',
    );
  }
}

/**
 * What a call does first under the lock: leftovers of a consolidation or install a killed
 * process left are removed (once per process and directory), and if another process
 * consolidated P meanwhile, what this one believed present is forgotten (its verified heads
 * must be verified again, its cached trees read again).
 */
export async function enterPrivateState(ctx: DirContext): Promise<void> {
  if (!ctx.maintenance.leftoversRemoved) {
    // Unremovable leftovers (a permission) are harmless to reads; a later call tries again.
    await ctx.db
      .removeLeftovers()
      .then(() => {
        ctx.maintenance.leftoversRemoved = true;
      })
      .catch(() => undefined);
  }
  if (ctx.db.consolidatedElsewhere()) {
    ctx.verifiedHeads.clear();
    ctx.trees.clear();
  }
}
