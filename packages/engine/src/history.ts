/**
 * The retained history (contract §11, §12 `log`): the publications the active chain and the
 * retained chains of `current` still hold, newest first. A checkpoint is a boundary: its head
 * commit is a publication, its ancestors are gone. Packs P lacks are fetched, verified and
 * installed in P's object database; nothing else of P (its baseline, its state) changes.
 */
import type { FileStat } from '@slivingdoc/envelope';
import {
  type CommitData,
  DEFAULT_AUTHOR,
  diffstat,
  importPack,
  type TreeEntries,
} from '@slivingdoc/merge';
import type { Manifest } from '@slivingdoc/store';
import type { DirContext } from './context';
import { EMPTY_TREE, NO_FILES } from './context';
import { classifyKnown, integrityFailure } from './errors';
import { obtainPack, type PackDescriptor } from './remote';

/** One increment (or checkpoint) of the retained chains: a unit `revert` can undo. */
export interface RetainedIncrement {
  /** Its chain position: the increment's `generation`, a checkpoint's `throughGeneration`. */
  generation: bigint;
  /** Head commit after it. */
  head: string;
  /**
   * Head it was built on: `null` for the very first publication (the empty notebook before it),
   * `undefined` when that state is no longer retained (a checkpoint whose past was compacted).
   */
  parent: string | null | undefined;
  pack: PackDescriptor;
}

/**
 * Every increment of the retained chains, newest first. An increment head that is also a
 * checkpoint's head (the last increment a checkpoint compacted) is listed once, as the increment.
 */
export function retainedIncrements(manifest: Manifest): RetainedIncrement[] {
  const chains = [manifest, ...manifest.retained];
  const byHead = new Map<string, RetainedIncrement>();
  for (const chain of chains) {
    for (const increment of chain.increments) {
      byHead.set(increment.head, {
        generation: increment.generation,
        head: increment.head,
        parent: increment.parent,
        pack: increment,
      });
    }
  }
  for (const chain of chains) {
    const checkpoint = chain.checkpoint;
    if (byHead.has(checkpoint.head)) continue;
    byHead.set(checkpoint.head, {
      generation: checkpoint.throughGeneration,
      head: checkpoint.head,
      // Only the first publication's checkpoint is known to stand on the empty notebook.
      parent: checkpoint.throughGeneration === 1n ? null : undefined,
      pack: checkpoint,
    });
  }
  return [...byHead.values()].sort((a, b) => (a.generation > b.generation ? -1 : 1));
}

/** One publication of the retained history, as `log` shows it. Carries no object id. */
export interface PublicationRecord {
  /** The chain position of the increment that holds it. */
  generation: number;
  /** Commit time: UTC, whole seconds since the epoch. */
  time: number;
  /** The author name: the participant who published it. */
  actor: string;
  /** The whole message (its bytes decoded as UTF-8). */
  message: string;
  /** Per-file changes; `undefined` when not asked for or when the state before it is gone. */
  files?: FileStat[] | undefined;
}

/** Options of {@link readHistory}. */
export interface HistoryOptions {
  /** How many publications to return (newest first). */
  limit: number;
  /** Whether to compute per-file insertions and deletions. */
  stat: boolean;
}

/** Commits one increment may hold (group commit chains one per member); a guard, not a rule. */
const MAX_COMMITS_PER_INCREMENT = 10_000;

/** Makes sure the increment's commits are in P, fetching and installing its pack otherwise. */
export async function ensureIncrement(
  ctx: DirContext,
  increment: RetainedIncrement,
): Promise<void> {
  if (await ctx.db.has(increment.head)) return;
  try {
    await importPack(ctx.db, await obtainPack(ctx, increment.pack));
  } catch (err) {
    throw (
      classifyKnown(err) ??
      integrityFailure(
        'MISSING_PACK',
        'A pack of the retained history is gone from the store; nothing was changed.',
        err,
      )
    );
  }
}

/** The flattened tree of a commit. */
async function treeOf(ctx: DirContext, commit: CommitData): Promise<TreeEntries> {
  return commit.tree === EMPTY_TREE ? NO_FILES : ctx.trees.read(ctx.db, commit.tree);
}

/**
 * The latest `limit` publications of the retained history, newest first; every commit of an
 * increment is listed with that increment's generation.
 */
export async function readHistory(
  ctx: DirContext,
  manifest: Manifest,
  options: HistoryOptions,
): Promise<PublicationRecord[]> {
  const increments = retainedIncrements(manifest);
  const records: PublicationRecord[] = [];
  for (const [index, increment] of increments.entries()) {
    if (records.length >= options.limit) break;
    await ensureIncrement(ctx, increment);
    const older = increments[index + 1];
    let oid: string | undefined = increment.head;
    for (let n = 0; oid !== undefined && n < MAX_COMMITS_PER_INCREMENT; n += 1) {
      if (records.length >= options.limit) break;
      const commit = await ctx.db.readCommit(oid);
      records.push({
        generation: Number(increment.generation),
        time: commit.time,
        actor: commit.author ?? DEFAULT_AUTHOR,
        message: Buffer.from(commit.message).toString('utf8'),
        files: options.stat ? await statOf(ctx, commit, older) : undefined,
      });
      const last =
        increment.parent === undefined ||
        commit.parent === undefined ||
        commit.parent === increment.parent;
      // A member commit its pack does not carry (a writer that packs only the head) ends the
      // walk: what is listed is what the store still holds.
      oid = last || !(await ctx.db.has(commit.parent as string)) ? undefined : commit.parent;
    }
  }
  return records;
}

/**
 * The commit's own changes, when the state before it is still available: its parent is in P
 * (another commit of the same increment, or fetched with the older increment).
 */
async function statOf(
  ctx: DirContext,
  commit: CommitData,
  older: RetainedIncrement | undefined,
): Promise<FileStat[] | undefined> {
  const after = await treeOf(ctx, commit);
  if (commit.parent === undefined) return diffstat(NO_FILES, after, ctx.db);
  if (older?.head === commit.parent) await ensureIncrement(ctx, older);
  if (!(await ctx.db.has(commit.parent))) return undefined;
  const before = await treeOf(ctx, await ctx.db.readCommit(commit.parent));
  return diffstat(before, after, ctx.db);
}
