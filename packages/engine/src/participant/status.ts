/**
 * `status` (contract §12): what a notebook directory holds that is not published, how far its
 * baseline is behind the store, whether a repair is pending, and its proposal under review.
 * Read-only: it reads `current` (and the directory's proposal when P says it has one) and
 * nothing else from the store, never rewrites L and never records a baseline.
 */
import type { FileIssue, FileStat } from '@slivingdoc/envelope';
import { diffstat } from '@slivingdoc/merge';
import type { Manifest } from '@slivingdoc/store';
import type { DirContext } from '../context';
import { retainedIncrements } from '../notebook/history';
import { type DirectoryProposal, directoryProposal } from '../review/propose';
import { scanLocal } from './local';
import type { Entry } from './sync';

/** The state of a notebook directory. */
export type NotebookState = 'not-pulled' | 'clean' | 'changed' | 'recovery-pending';

/** What `status` reports about one notebook directory. Carries no object id or private path. */
export interface NotebookStatus {
  /** The directory (its realpath when it exists). */
  path: string;
  state: NotebookState;
  /** The manifest generation of `current` now (0: the store holds no notebook yet). */
  storeGeneration: number;
  /** The generation the directory's unpublished edits are based on; `null` when not pulled. */
  baselineGeneration: number | null;
  /** Publications accepted since the baseline; `null` when not pulled. */
  behind: number | null;
  /** Unpublished changes of L against the baseline, sorted by path (the report's file lines). */
  files: FileStat[];
  filesChanged: number;
  insertions: number;
  deletions: number;
  /** Files in L that are not notebook state (a commit would refuse them). */
  unsupported: FileIssue[];
  /** The size of the directory's private object database; `null` when not pulled. */
  privateState: PrivateStateSize | null;
  /** The directory's proposal not yet reported back to it (docs/review.md); null: none. */
  proposal: DirectoryProposal | null;
}

/** What P's object database holds (docs/engine.md, "Bounded private state"). */
export interface PrivateStateSize {
  /** Objects stored (an object held twice until the next consolidation counts twice). */
  objects: number;
  /** Packs (each a pack file and its index). */
  packs: number;
  /** Bytes of its packs, indexes and loose object files. */
  bytes: number;
}

/** The status of a directory that was never pulled: nothing local is compared. */
export function notPulledStatus(path: string, manifest: Manifest | undefined): NotebookStatus {
  return {
    path,
    state: 'not-pulled',
    storeGeneration: Number(manifest?.generation ?? 0n),
    baselineGeneration: null,
    behind: null,
    files: [],
    filesChanged: 0,
    insertions: 0,
    deletions: 0,
    unsupported: [],
    privateState: null,
    proposal: null,
  };
}

/**
 * Publications between the baseline and `current`: chain positions when the baseline head is
 * still in the retained chains, else the difference of manifest generations (an upper bound:
 * it also counts checkpoints).
 */
function publicationsBehind(manifest: Manifest | undefined, entry: Entry): number {
  if (manifest === undefined) return 0;
  const increments = retainedIncrements(manifest);
  const latest = increments[0]?.generation ?? 0n;
  if (entry.rollback === undefined || entry.rollback.head === '') return Number(latest);
  const base = increments.find((increment) => increment.head === entry.rollback?.head);
  if (base !== undefined) return Number(latest - base.generation);
  const difference = manifest.generation - entry.rollback.generation;
  return Number(difference > 0n ? difference : 0n);
}

/** The status of a pulled directory, its lock held. */
export async function statusLocked(
  ctx: DirContext,
  entry: Entry,
  manifest: Manifest | undefined,
): Promise<NotebookStatus> {
  const local = await scanLocal(ctx);
  const files = await diffstat(entry.baseEntries, local.entries, ctx.db);
  const changed = files.length > 0 || local.problems.length > 0;
  return {
    path: ctx.dir,
    state: entry.repairPending ? 'recovery-pending' : changed ? 'changed' : 'clean',
    storeGeneration: Number(manifest?.generation ?? 0n),
    baselineGeneration: Number(entry.rollback?.generation ?? 0n),
    behind: publicationsBehind(manifest, entry),
    files,
    filesChanged: files.length,
    insertions: files.reduce((sum, file) => sum + file.insertions, 0),
    deletions: files.reduce((sum, file) => sum + file.deletions, 0),
    unsupported: local.problems,
    privateState: await ctx.db
      .size()
      .then(({ objects, packs, bytes }) => ({ objects, packs, bytes })),
    proposal: await directoryProposal(ctx),
  };
}
