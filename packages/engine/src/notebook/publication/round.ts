/**
 * A round of the publication queue, owned by its leader (the writer holding the publication
 * gate): merge the leader's own change (first round only) and the followers queued at the
 * round's start onto R in arrival order, one commit per change chained in that order, then
 * publish them as one increment with one CAS. Every taken follower is answered exactly once,
 * and only as contract §9 allows: `accepted` once the CAS is proven accepted, `unproven` when
 * the round's resolution is, `excluded` only when no CAS that carries its change can land.
 */
import { setMaxListeners } from 'node:events';
import type { FileStat } from '@slivingdoc/envelope';
import { diffstat, type MergeConflict, sameEntries, type TreeEntries } from '@slivingdoc/merge';
import { type CallState, type DirContext, NO_FILES, newCall } from '../../context';
import { remoteBusy, unresolvedMarkers } from '../../verdicts';
import { backoff } from '../backoff';
import type { Baseline } from '../baseline';
import { markerIssues, threeWayMerge } from '../merge';
import { publishHead } from '../publish';
import { type Current, loadRemote, prefetchRemote, type RemoteView } from '../remote';
import { GroupServer, type TakenMember } from './endpoint';
import type { ExclusionReason, HolderMessage, MemberChange } from './messages';

/** Members per round, the holder included (bounds the merge work and the pack). */
export const MAX_GROUP_MEMBERS = 128;
/** Message and blob bytes per round (the first member is taken whatever its size). */
export const GROUP_BYTE_BUDGET = 32 * 1024 * 1024;
/** Rounds per turn: the holder's own round, then members queued meanwhile (its latency). */
export const MAX_ROUNDS = 4;

/**
 * A participant's own change, as its commit proposes it: what its scan found against its
 * baseline, and how it records its publication input.
 */
export interface OwnChange {
  /** The published state the participant's edits are based on. */
  base: Baseline;
  /** The files of `base`. */
  baseEntries: TreeEntries;
  /** The participant's files as scanned (its L). */
  files: TreeEntries;
  /** The paths that differ between `baseEntries` and `files`. */
  changed: string[];
  message: Uint8Array;
  /** The author name (contract §9); `slivingdoc` when absent. */
  author: string | undefined;
  /**
   * Records, right before a CAS that may publish this change, the L it merged and the
   * baseline the CAS would make (docs/engine.md, "Kill at any instruction"): a process killed
   * after the swap lands but before it records anything leaves L as merged, and the next call
   * must not publish those lines again.
   */
  record(proposal: Baseline): Promise<void>;
}

/** What one attempt came to; L is rewritten afterwards, outside the publication gate. */
export type Step =
  | { kind: 'lost'; observed: Current | undefined }
  | { kind: 'conflict'; remote: RemoteView; merged: TreeEntries; conflicts: MergeConflict[] }
  | { kind: 'unchanged'; remote: RemoteView }
  | {
      kind: 'accepted';
      remote: RemoteView;
      /** The accepted tree (with followers: every member's change). */
      merged: TreeEntries;
      /** The tree of the caller's own commit (its parent's tree is `remote.entries`). */
      own: TreeEntries;
      baseline: Baseline;
      activeIncrements: number;
    };

/** A step that ends the attempts (anything but a lost race). */
export type Settled = Exclude<Step, { kind: 'lost' }>;

/** merge(A, L, R) for the caller's own change: a conflict, no change, or the merged tree. */
export async function mergeOwn(
  ctx: DirContext,
  own: OwnChange,
  remote: RemoteView,
): Promise<
  | { kind: 'conflict'; remote: RemoteView; merged: TreeEntries; conflicts: MergeConflict[] }
  | { kind: 'unchanged'; remote: RemoteView }
  | { kind: 'merged'; result: TreeEntries }
> {
  const { baseEntries, files, changed } = own;
  const merged = await threeWayMerge(ctx, baseEntries, files, remote.entries);
  if (merged.conflicts.length > 0)
    return { kind: 'conflict', remote, merged: merged.result, conflicts: merged.conflicts };
  // The merged result of every file the caller touched and the merge rewrote.
  const rewritten = changed.filter((path) => merged.result.get(path) !== files.get(path));
  const mergedMarkers = await markerIssues(ctx, merged.result, rewritten);
  if (mergedMarkers.length > 0) throw unresolvedMarkers(mergedMarkers);
  if (sameEntries(merged.result, remote.entries)) return { kind: 'unchanged', remote };
  return { kind: 'merged', result: merged.result };
}

/**
 * The backoff after a lost race (contract §9), used to fetch what the winner published meanwhile.
 * The prefetch always settles before this returns, so nothing touches P after the call ends.
 */
export async function backoffPrefetching(
  ctx: DirContext,
  call: CallState,
  retry: number,
  observed: Current | undefined,
): Promise<void> {
  const [slept] = await Promise.allSettled([
    backoff(retry, ctx.cfg.clock, call.signal),
    prefetchRemote(ctx, observed),
  ]);
  if (slept.status === 'rejected') throw slept.reason;
}

/** A member ready to merge: its change, its baseline's files and its L's files. */
interface Ready {
  taken: TakenMember;
  change: MemberChange;
  baseEntries: TreeEntries;
  local: TreeEntries;
}

/** A commit placed in the group's chain. */
interface Placed {
  commit: string;
  tree: string;
  parentEntries: TreeEntries;
  entries: TreeEntries;
}

/** The group's chain of commits on top of R, one per merged change. */
class Chain {
  entries: TreeEntries;
  tree: string;
  head: string | undefined;
  last: Placed | undefined;
  readonly #time = Math.floor(Date.now() / 1000);

  constructor(
    private readonly ctx: DirContext,
    remote: RemoteView,
  ) {
    this.entries = remote.entries;
    this.tree = remote.baseline.tree;
    this.head = remote.current?.manifest.head;
  }

  async add(result: TreeEntries, message: Uint8Array, author: string | undefined) {
    const { db } = this.ctx;
    const tree = await db.writeTree(
      result,
      { tree: this.tree, entries: this.entries },
      { staged: true },
    );
    const commit = await db.writeCommit(
      {
        tree,
        parent: this.head,
        message,
        time: this.#time,
        ...(author === undefined ? {} : { author }),
      },
      { staged: true },
    );
    const placed: Placed = { commit, tree, parentEntries: this.entries, entries: result };
    this.entries = result;
    this.tree = tree;
    this.head = commit;
    this.last = placed;
    return placed;
  }
}

/**
 * A member's blobs written to P (each checked against its claimed id) and its baseline's
 * files read; `undefined` when the holder cannot merge it (it then attempts alone).
 */
async function ready(ctx: DirContext, taken: TakenMember): Promise<Ready | undefined> {
  const { change } = taken;
  try {
    const claimed = [...change.blobs.keys()];
    const written = await ctx.db.writeBlobs([...change.blobs.values()]);
    if (written.some((oid, i) => oid !== claimed[i])) return undefined;
    let baseEntries: TreeEntries = NO_FILES;
    if (change.base.head !== '') {
      const { tree } = await ctx.db.readCommit(change.base.head);
      baseEntries = await ctx.trees.read(ctx.db, tree);
    } else if (change.base.generation !== 0n) return undefined;
    const local = new Map(baseEntries);
    for (const [path, oid] of change.changes) {
      if (oid === null) local.delete(path);
      else local.set(path, oid);
    }
    return { taken, change, baseEntries, local };
  } catch {
    return undefined;
  }
}

/** merge(A, L, acc) for a member: the merged tree, or why it is left out. */
async function mergeMember(
  ctx: DirContext,
  member: Ready,
  remote: RemoteView,
  acc: TreeEntries,
): Promise<TreeEntries | ExclusionReason> {
  const { current } = remote;
  const { base } = member.change;
  // No group on the first publication (a checkpoint); a member whose baseline is ahead of R
  // learns of the rollback on its own attempt.
  if (current === undefined) return 'solo';
  const generation = current.manifest.generation;
  if (base.generation > generation) return 'solo';
  if (base.generation === generation && base.head !== current.manifest.head) return 'solo';
  try {
    const merged = await threeWayMerge(ctx, member.baseEntries, member.local, acc);
    if (merged.conflicts.length > 0) return 'conflict';
    const rewritten = member.change.changes
      .map(([path]) => path)
      .filter((path) => merged.result.get(path) !== member.local.get(path));
    if ((await markerIssues(ctx, merged.result, rewritten)).length > 0) return 'solo';
    if (sameEntries(merged.result, acc)) return 'solo';
    return merged.result;
  } catch {
    return 'solo';
  }
}

type Landed = 'no' | 'unknown' | 'yes';

/**
 * Sends `prepared` (with each member's own commit) to every placed member, flushed to the
 * kernel, and waits for each one's `recorded`: until `wait.idleMs` pass without a new one, and
 * never longer than `wait.totalMs` in all (`EngineConfig.groupRecordWait`, 2 s and 10 s by
 * default); returns those that did not acknowledge (gone, late, or answering something
 * malformed). Such a member is left out of that CAS: it may have died before recording its
 * input, and a change that lands unrecorded comes back as the member's own edit
 * (docs/engine.md, "A member's publication input"). Idle rather than total, so a hundred
 * members on a loaded machine, acknowledging one after another, are not cut off; only a
 * stopped or starved member uses it up (a killed one closes its connection, which ends its
 * wait at once).
 */
async function unrecordedMembers(
  placed: { member: Ready; placed: Placed }[],
  prepared: Omit<Extract<HolderMessage, { t: 'prepared' }>, 'commit'>,
  wait: { idleMs: number; totalMs: number },
): Promise<TakenMember[]> {
  if (placed.length === 0) return [];
  const giveUp = new AbortController();
  // One listener per member waits on it (Node warns past 10 by default).
  setMaxListeners(placed.length + 1, giveUp.signal);
  const stop = () => giveUp.abort();
  const cap = setTimeout(stop, wait.totalMs);
  let idle = setTimeout(stop, wait.idleMs);
  try {
    const recorded = await Promise.all(
      placed.map(async ({ member, placed: mine }) => {
        const { taken } = member;
        const sent = await taken.send({ ...prepared, commit: mine.commit });
        const ok = sent && (await taken.recorded(prepared.publication, giveUp.signal));
        if (ok && !giveUp.signal.aborted) {
          clearTimeout(idle);
          idle = setTimeout(stop, wait.idleMs);
        }
        return ok;
      }),
    );
    return placed.filter((_, i) => !recorded[i]).map(({ member }) => member.taken);
  } finally {
    clearTimeout(cap);
    clearTimeout(idle);
  }
}

/**
 * One round: takes the queued members, then attempts up to `attempts` times (a lost race
 * re-merges everyone still in on the new R). Returns the holder's own step when `own` is given.
 */
async function runRound(
  ctx: DirContext,
  call: CallState,
  opts: { own: OwnChange | undefined; server: GroupServer | undefined; attempts: number },
): Promise<Settled | undefined> {
  const { own, server, attempts } = opts;
  const open = new Set<TakenMember>();
  const answer = async (member: TakenMember, message: Parameters<TakenMember['finish']>[0]) => {
    open.delete(member);
    await member.finish(message);
  };
  const cas: { landed: Landed } = { landed: 'no' };
  try {
    const members: Ready[] = [];
    let ownStep: Exclude<Settled, { kind: 'accepted' }> | undefined;
    let ownError: unknown;
    let observed: Current | undefined;
    let tookMembers = false;
    let backoffDue = false;
    // `lost` counts lost races (contract §9's retries). An attempt withheld because a member did not
    // record its input leaves that member out and re-merges at once: it lost no race, and each
    // one removes a member, so there are at most as many as members.
    for (let lost = 0; lost < attempts; ) {
      if (backoffDue) {
        backoffDue = false;
        await backoffPrefetching(ctx, call, lost - 1, observed);
      }
      const remote = await loadRemote(ctx, call, own?.base);
      call.stage = 'merge';
      // Taken once R is read: whoever queued meanwhile joins too, and nobody waits for it.
      if (!tookMembers) {
        tookMembers = true;
        const room = own ? MAX_GROUP_MEMBERS - 1 : MAX_GROUP_MEMBERS;
        for (const member of server?.take(room, GROUP_BYTE_BUDGET) ?? []) {
          open.add(member);
          const prepared = await ready(ctx, member);
          if (prepared === undefined) await answer(member, { t: 'excluded', reason: 'solo' });
          else members.push(prepared);
        }
      }
      const chain = new Chain(ctx, remote);
      let ownPlaced: Placed | undefined;
      if (own !== undefined && ownStep === undefined && ownError === undefined) {
        try {
          const merged = await mergeOwn(ctx, own, remote);
          if (merged.kind === 'merged')
            ownPlaced = await chain.add(merged.result, own.message, own.author);
          else ownStep = merged;
        } catch (err) {
          // The holder's own refusal (markers) ends only its own call, after the round.
          ownError = err;
        }
      }
      const placed: { member: Ready; placed: Placed }[] = [];
      for (const member of members) {
        if (!open.has(member.taken)) continue;
        // Gone before it could record anything: its change must not land (see `beforeCas`).
        if (member.taken.gone) {
          await answer(member.taken, { t: 'excluded', reason: 'solo' });
          continue;
        }
        const merged = await mergeMember(ctx, member, remote, chain.entries);
        if (typeof merged === 'string') {
          await answer(member.taken, { t: 'excluded', reason: merged });
          continue;
        }
        placed.push({
          member,
          placed: await chain.add(merged, member.change.message, member.change.author),
        });
      }
      const last = chain.last;
      if (last === undefined) break;
      const outcome = await publishHead(
        ctx,
        call,
        remote,
        { head: last.commit, tree: last.tree },
        {
          checkMoved: false,
          beforeCas: async (target) => {
            // The holder's own change, recorded before the CAS as a solo attempt records it: a
            // kill after the swap lands must not make the next call publish those lines again.
            if (own !== undefined && ownPlaced !== undefined) await own.record(target);
            cas.landed = 'unknown';
            const unrecorded = await unrecordedMembers(
              placed,
              {
                t: 'prepared',
                publication: target.publication,
                position: String(target.position),
                conditionedOn: target.conditionedOn ?? null,
                generation: String(target.generation),
                head: last.commit,
                tree: last.tree,
              },
              ctx.cfg.groupRecordWait,
            );
            if (unrecorded.length === 0) return undefined;
            // Never sent: the members left out attempt alone; the rest re-merge without them.
            cas.landed = 'no';
            for (const member of unrecorded)
              await answer(member, { t: 'excluded', reason: 'solo' });
            return 'withhold';
          },
        },
      );
      if (!outcome.accepted) {
        cas.landed = 'no';
        if (outcome.withheld) continue;
        lost += 1;
        backoffDue = true;
        observed = outcome.observed;
        continue;
      }
      cas.landed = 'yes';
      ctx.onPublished(outcome.activeIncrements);
      const generation = String(outcome.baseline.generation);
      // Every diffstat first, then every answer at once: a member answered early starts
      // rewriting its L and would compete for the CPU with the holder still answering others.
      const verdicts: { taken: TakenMember; files: FileStat[] }[] = [];
      for (const { member, placed: mine } of placed)
        verdicts.push({
          taken: member.taken,
          files: await diffstat(mine.parentEntries, mine.entries, ctx.db),
        });
      await Promise.all(
        verdicts.map(({ taken, files }) =>
          answer(taken, { t: 'accepted', generation, head: last.commit, files }),
        ),
      );
      if (ownError !== undefined) throw ownError;
      if (ownPlaced === undefined) return ownStep;
      return {
        kind: 'accepted',
        remote,
        merged: chain.entries,
        own: ownPlaced.entries,
        baseline: outcome.baseline,
        activeIncrements: outcome.activeIncrements,
      };
    }
    if (ownError !== undefined) throw ownError;
    if (own !== undefined && ownStep === undefined) throw remoteBusy(attempts);
    return ownStep;
  } catch (err) {
    // A CAS refused before it was sent (unreachable, denied) landed nothing.
    if (cas.landed === 'unknown' && call.remoteAccepted === 'no') cas.landed = 'no';
    throw err;
  } finally {
    for (const member of open) {
      if (cas.landed === 'no') await answer(member, { t: 'excluded', reason: 'solo' });
      else if (cas.landed === 'unknown') await answer(member, { t: 'unproven' });
      // Landed, but its answer could not be built: it finds its publication in the store.
      else member.abandon();
    }
  }
}

/**
 * The holder's turn: its own round, then up to {@link MAX_ROUNDS} − 1 rounds for members who
 * queued meanwhile. Returns the holder's own step; the endpoint is closed (members still queued
 * are told `later`) before the gate is released.
 */
export async function leadTurn(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
  opts: { address: string; attempts: number },
): Promise<Settled> {
  const server = await GroupServer.open(opts.address, ctx.cfg.logger);
  try {
    const step = await runRound(ctx, call, { own, server, attempts: opts.attempts });
    // With `own`, a round returns the holder's step or throws.
    if (step === undefined) throw new Error('group round returned no step for its holder');
    for (let round = 1; round < MAX_ROUNDS && (server?.queued ?? 0) > 0; round += 1) {
      await runRound(ctx, newCall(undefined), {
        own: undefined,
        server,
        attempts: opts.attempts,
      }).catch((err: unknown) => ctx.cfg.logger.warn({ err }, 'group commit round failed'));
    }
    return step;
  } finally {
    await server?.close();
  }
}
