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
  ObjectMissingError,
  type TreeEntries,
} from '@slivingdoc/merge';
import type { Manifest } from '@slivingdoc/store';
import type { DirContext } from '../context';
import { EMPTY_TREE, NO_FILES } from '../context';
import { classifyKnown, integrityFailure } from '../errors';
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

/** Makes sure the increment's commits are in P, fetching and installing its pack otherwise. */
export async function ensureIncrement(
  ctx: DirContext,
  increment: RetainedIncrement,
): Promise<void> {
  if (await ctx.db.has(increment.head)) return;
  await installPack(ctx, increment.pack);
}

/**
 * Runs `read` over the retained history. An increment's pack holds only what it added to its
 * parent, so its head commit in P says nothing about the rest of its state: a directory whose P
 * started at a newer checkpoint (or whose P a consolidation pruned) can hold an older head but
 * not the blobs it kept from before. When `read` meets a missing object, every retained pack
 * (each chain's checkpoint, a whole state, and its increments) is installed, and `read` runs
 * once more.
 */
export async function withRetainedObjects<T>(
  ctx: DirContext,
  manifest: Manifest | undefined,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof ObjectMissingError) || manifest === undefined) throw err;
    for (const chain of [manifest, ...manifest.retained]) {
      await installPack(ctx, chain.checkpoint);
      for (const increment of chain.increments) await installPack(ctx, increment);
    }
    return read();
  }
}

/** Fetches a retained pack (from P's pack cache or the store) and installs it in P. */
async function installPack(ctx: DirContext, pack: PackDescriptor): Promise<void> {
  try {
    await importPack(ctx.db, await obtainPack(ctx, pack));
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

/** One commit of the retained history, with what is needed to find the state before it. */
export interface RetainedCommit {
  generation: bigint;
  commit: CommitData;
  /** The increment just older than the one holding this commit (its head may be the parent). */
  older: RetainedIncrement | undefined;
  /** Whether this commit is its increment's head (the last member of a group). */
  isHead: boolean;
  /**
   * Whether the state before it belongs to the retained history (false for the head of a
   * checkpoint whose past was compacted), whatever this directory's object cache still holds.
   */
  pastRetained: boolean;
}

/** Commits one increment may hold (group commit chains one per member); a guard, not a rule. */
const MAX_COMMITS_PER_INCREMENT = 10_000;

/**
 * The commits of one increment, newest first: the head, then its parents while they belong to
 * the increment and are in P (a writer that packs only the head ends the walk).
 */
export async function incrementCommits(
  ctx: DirContext,
  increment: RetainedIncrement,
  older: RetainedIncrement | undefined,
): Promise<RetainedCommit[]> {
  await ensureIncrement(ctx, increment);
  const out: RetainedCommit[] = [];
  let oid: string | undefined = increment.head;
  for (let n = 0; oid !== undefined && n < MAX_COMMITS_PER_INCREMENT; n += 1) {
    const commit = await ctx.db.readCommit(oid);
    out.push({
      generation: increment.generation,
      commit,
      older,
      isHead: n === 0,
      pastRetained: increment.parent !== undefined,
    });
    const last =
      increment.parent === undefined ||
      commit.parent === undefined ||
      commit.parent === increment.parent;
    oid = last || !(await ctx.db.has(commit.parent as string)) ? undefined : commit.parent;
  }
  return out;
}

/** Every retained commit, newest first (an increment's members newest first). */
export async function* retainedCommits(
  ctx: DirContext,
  manifest: Manifest,
): AsyncGenerator<RetainedCommit> {
  const increments = retainedIncrements(manifest);
  for (const [index, increment] of increments.entries()) {
    yield* await incrementCommits(ctx, increment, increments[index + 1]);
  }
}

/** The flattened tree of a commit. */
export async function treeOf(ctx: DirContext, commit: CommitData): Promise<TreeEntries> {
  return commit.tree === EMPTY_TREE ? NO_FILES : ctx.trees.read(ctx.db, commit.tree);
}

/**
 * The notebook just before `commit`, when still available: the empty notebook before the first
 * publication, else its parent in P (another member of its increment, or the older increment's
 * head, fetched when needed). `undefined` when that state is no longer retained.
 */
export async function stateBefore(
  ctx: DirContext,
  { commit, older }: RetainedCommit,
): Promise<TreeEntries | undefined> {
  if (commit.parent === undefined) return NO_FILES;
  if (older?.head === commit.parent) await ensureIncrement(ctx, older);
  if (!(await ctx.db.has(commit.parent))) return undefined;
  return treeOf(ctx, await ctx.db.readCommit(commit.parent));
}

/** A retained commit as `log` lists it. */
export async function publicationRecord(
  ctx: DirContext,
  retained: RetainedCommit,
  stat: boolean,
): Promise<PublicationRecord> {
  const { commit } = retained;
  let files: PublicationRecord['files'];
  if (stat) {
    const before = await stateBefore(ctx, retained);
    files =
      before === undefined ? undefined : await diffstat(before, await treeOf(ctx, commit), ctx.db);
  }
  return {
    generation: Number(retained.generation),
    time: commit.time,
    actor: commit.author ?? DEFAULT_AUTHOR,
    message: Buffer.from(commit.message).toString('utf8'),
    files,
  };
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
  const records: PublicationRecord[] = [];
  for await (const retained of retainedCommits(ctx, manifest)) {
    if (records.length >= options.limit) break;
    records.push(await publicationRecord(ctx, retained, options.stat));
  }
  return records;
}
