/**
 * Keeps an object database bounded (docs/engine.md "Bounded private state"): after a call, while
 * no call of any directory using it holds it, the merge package consolidates it once its loose
 * objects or packs cross the thresholds, keeping what the roots below reach and dropping the rest.
 */
import type { ConsolidationRoots, ConsolidationStep } from '@slivingdoc/merge';
import {
  type PrivateStateLocation,
  type RewriteTarget,
  readPrivateRecords,
  type StateV1,
} from '@slivingdoc/workspace';
import type { ResolvedConfig } from '../config';
import type { DirContext } from '../context';
import { FAILPOINT, type FailpointName } from '../failpoints';
import type { NotebookObjects } from './objects';

/** The objects a directory's records name: kept whole (`closures`) or alone (`objects`). */
export interface RecordRoots {
  closures: string[];
  objects: string[];
}

/** What a state record and a target record name (a repair after a kill reads all of it). */
function recordRoots(
  state: StateV1 | undefined,
  target: RewriteTarget | undefined,
  into: RecordRoots,
): void {
  if (state !== undefined) into.closures.push(state.baselineHead, state.baselineTree);
  if (target === undefined) return;
  into.closures.push(target.previous.head, target.previous.tree);
  for (const rewrite of target.rewrites) {
    into.closures.push(rewrite.next.head, rewrite.next.tree);
    for (const blob of rewrite.changes.values()) if (blob !== null) into.objects.push(blob);
  }
}

/**
 * Everything one open directory needs kept readable (contract §10): the recorded baseline;
 * every baseline and target blob of the target record (what a repair after a kill reads); the
 * blobs the stat cache names (a scan trusts them without reading the file).
 */
export async function directoryRoots(ctx: DirContext, into: RecordRoots): Promise<void> {
  const state = await ctx.priv.readState().catch(() => undefined);
  const target = await ctx.priv.readTarget().catch(() => undefined);
  recordRoots(state, target, into);
  // Blobs are kept without being read: a 10,000-file directory names 10,000 of them.
  into.objects.push(...ctx.priv.statCache.ids());
}

/**
 * The records of a directory this process has not opened (a shared database keeps its
 * baseline and repair objects too; its stat cache is checked against the database on its
 * first scan, so its blobs need not be).
 */
export async function unopenedDirectoryRoots(
  location: PrivateStateLocation,
  into: RecordRoots,
): Promise<void> {
  const records = await readPrivateRecords(location).catch(() => undefined);
  recordRoots(records?.state, records?.target, into);
}

/**
 * Everything a database must keep readable: the heads this process verified in it (the
 * anchors of incremental imports: a pruned anchor would let an import skip blobs it no longer
 * has); the heads background work holds (a checkpoint's prefix) and the next checkpoint's
 * prefix head; and what every directory using it names (`directories` adds their roots: the
 * one directory of a per-directory database, the union of all for a shared one).
 */
export async function databaseRoots(
  objects: NotebookObjects,
  directories: (into: RecordRoots) => Promise<void>,
): Promise<ConsolidationRoots> {
  const into: RecordRoots = {
    closures: [...objects.verifiedHeads, ...objects.pinnedHeads],
    objects: [],
  };
  if (objects.upkeep.prefixHead !== undefined) into.closures.push(objects.upkeep.prefixHead);
  await directories(into);
  return into;
}

const STEPS: Record<ConsolidationStep, FailpointName> = {
  'after-pack-written': FAILPOINT.consolidationAfterPackWritten,
  'after-indexes-removed': FAILPOINT.consolidationAfterIndexesRemoved,
  'after-files-removed': FAILPOINT.consolidationAfterFilesRemoved,
};

/**
 * Consolidates the database when the thresholds say so; never throws. A failure (a full disk, a
 * permission) is logged with its code only and left for a later call: it keeps working as it
 * is, and the calls fail only if they cannot be served. The one info record per consolidation
 * carries counts, sizes and time, never a path or an object id.
 */
export async function maintainObjects(
  objects: NotebookObjects,
  cfg: ResolvedConfig,
  directories: (into: RecordRoots) => Promise<void>,
): Promise<void> {
  try {
    const report = await objects.db.consolidate({
      roots: () => databaseRoots(objects, directories),
      full: cfg.consolidateAlways,
      step: (name) => cfg.failpoints.hit(STEPS[name]),
    });
    if (report === undefined) return;
    cfg.logger.info(
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
    cfg.logger.warn(
      { code: typeof code === 'string' ? code : 'UNKNOWN' },
      'private state consolidation failed; a later call tries again',
    );
  }
}

/**
 * What a call does first under the lock: leftovers of a consolidation or install a killed
 * process left in a directory's own database are removed (once per process; a shared
 * database did so when it was claimed), and if another process consolidated it meanwhile,
 * what this one believed present is forgotten (its verified heads must be verified again,
 * its cached trees read again).
 */
export async function enterPrivateState(ctx: DirContext): Promise<void> {
  const { upkeep } = ctx.objects;
  if (!upkeep.leftoversRemoved) {
    // Unremovable leftovers (a permission) are harmless to reads; a later call tries again.
    await ctx.db
      .removeLeftovers()
      .then(() => {
        upkeep.leftoversRemoved = true;
      })
      .catch(() => undefined);
  }
  if (ctx.db.consolidatedElsewhere()) {
    ctx.objects.verifiedHeads.clear();
    ctx.trees.clear();
  }
}
