/**
 * The publication queue: how one participant's change reaches the store (docs/engine.md, "A
 * commit's path"). Writers of one machine that publish to the same store queue behind one
 * machine-wide gate. Whoever holds the gate leads the round (`round.ts`): it merges its own
 * change and every follower's queued meanwhile, and publishes them with one CAS. A writer that
 * finds a leader follows it, sending its change over the round's endpoint (in memory when the
 * leader is in this process) and waiting for the verdict. With grouping off, the gate
 * unavailable, or the waiting budget spent, a writer attempts alone, a round of one, retrying
 * lost races as contract §9 describes. The gate is an optimisation only: the CAS still decides,
 * and writers on other hosts race through it.
 */

import type { FileStat } from '@slivingdoc/envelope';
import { diffstat, type MergeConflict, type TreeEntries } from '@slivingdoc/merge';
import { acquireLock, LockTimeoutError, lockAddress, type Release } from '@slivingdoc/workspace';
import type { ResolvedConfig } from '../../config';
import type { CallState, DirContext } from '../../context';
import { publicationUnproven } from '../../errors';
import { remoteBusy } from '../../verdicts';
import type { Baseline } from '../baseline';
import { publishAttempt, resolve } from '../publish';
import { type Current, loadRemote, type RemoteView } from '../remote';
import { joinGroup } from './follower';
import { MAX_FRAME_BYTES } from './frames';
import type { MemberChange, PreparedWire } from './messages';
import {
  backoffPrefetching,
  leadTurn,
  mergeOwn,
  type OwnChange,
  type Settled,
  type Step,
} from './round';

/**
 * The machine-wide name of the gate of the store named `identity`. A test-only `scope`
 * separates writers on one machine as if they ran on different hosts.
 */
export function publicationGateKey(identity: string, scope = ''): string {
  return scope === ''
    ? `publication-gate ${identity}`
    : `publication-gate ${identity} scope ${scope}`;
}

/**
 * Where the leader of the gate of `cfg`'s store serves its round (docs/engine.md,
 * "Group commit"): derived like every lock address, so it follows the lock's naming.
 */
export function groupEndpoint(cfg: Pick<ResolvedConfig, 'store' | 'gateScope'>): string {
  return lockAddress(`publication-group ${publicationGateKey(cfg.store.identity, cfg.gateScope)}`);
}

/** What publishing a participant's change came to; the participant then rewrites its L. */
export type Published =
  /** Accepted: L becomes `target`, the baseline `baseline`; `files` is the change's diffstat. */
  | {
      kind: 'accepted';
      target: TreeEntries;
      baseline: Baseline;
      files: FileStat[];
      /** The generation a leader answered its follower with (the answer's generation). */
      answered?: bigint;
    }
  | { kind: 'conflict'; remote: RemoteView; merged: TreeEntries; conflicts: MergeConflict[] }
  /** The change is already in R. */
  | { kind: 'unchanged'; remote: RemoteView };

/**
 * The generation an accepted change reports: a follower's is the one its leader answered with
 * (the answer's generation), a leader's or a lone attempt's that of its baseline.
 */
export function answeredGeneration(published: Extract<Published, { kind: 'accepted' }>): bigint {
  return published.answered ?? published.baseline.generation;
}

/**
 * One commit call's passage through the gate: its remaining waiting budget. The gate's holder
 * never waits for another lock (the directory's lock is taken before it), so it cannot
 * deadlock, and the kernel frees it when its holder dies.
 */
class PublicationGate {
  /** When the call's waiting budget runs out (epoch ms). */
  readonly deadline: number;

  constructor(
    private readonly ctx: DirContext,
    private readonly call: CallState,
  ) {
    this.deadline = Date.now() + ctx.cfg.publicationGateMs;
  }

  /** What is left of the waiting budget (ms); 0 when the gate is off. */
  get remainingMs(): number {
    if (this.ctx.cfg.publicationGateMs === 0) return 0;
    return Math.max(0, this.deadline - Date.now());
  }

  /**
   * Runs one attempt inside the gate, or without it when the gate is off or the call's
   * waiting budget is spent (the attempt then races as contract §9 describes); `attempt` learns
   * which. A waiter does no work meanwhile: fetching what the holders publish while waiting
   * was measured to cost a burst of 100 writers more CPU (each decodes every new manifest)
   * than it saved the holder, and fetching the backlog once before queueing flooded S3.
   */
  async around<T>(attempt: (held: boolean) => Promise<T>): Promise<T> {
    const taken = this.ctx.cfg.publicationGateMs === 0 ? 'busy' : await this.take(this.remainingMs);
    const leave = typeof taken === 'function' ? taken : undefined;
    try {
      return await attempt(leave !== undefined);
    } finally {
      await leave?.();
    }
  }

  /**
   * Takes the gate, waiting at most `waitMs`: its release, `busy` when it is still held after
   * the wait, `unavailable` when it cannot be taken at all (logged). Cancellation rejects.
   */
  async take(waitMs: number): Promise<Release | 'busy' | 'unavailable'> {
    const { cfg } = this.ctx;
    try {
      // Keyed by the store's identity, not P: writers with different private roots meet.
      return await acquireLock(publicationGateKey(cfg.store.identity, cfg.gateScope), {
        timeoutMs: Math.max(0, waitMs),
        ...(this.call.signal === undefined ? {} : { signal: this.call.signal }),
      });
    } catch (err) {
      if (this.call.signal?.aborted) throw err;
      if (err instanceof LockTimeoutError) return 'busy';
      // The gate is an optimisation: when it cannot be taken at all (say a lock directory
      // path too long for a socket), the attempt races as contract §9 describes.
      cfg.logger.warn(
        { code: (err as NodeJS.ErrnoException).code },
        'publication gate unavailable; attempting without it',
      );
      return 'unavailable';
    }
  }
}

/** What queueing came to: led, followed, or attempt alone. */
type Queued =
  /** This call led the round; its own step. */
  | { kind: 'led'; step: Settled }
  /** This call's change was accepted in another leader's round. */
  | {
      kind: 'followed';
      generation: bigint;
      head: string;
      /** The diffstat of its own change, when the leader sent it. */
      files: FileStat[] | undefined;
      /** Its own commit in the round's chain, when `files` must be computed from it. */
      commit: string | undefined;
    }
  /** Attempt alone (budget spent, or the gate unavailable). */
  | { kind: 'alone' };

/** Gate polls (5 ms doubling) while neither a round nor the gate is to be had, then a full wait. */
const GATE_POLLS = 6;

/** Frames carry blobs as base64 (4/3) plus JSON: changes larger than this attempt alone. */
const MAX_CHANGE_BYTES = Math.floor((MAX_FRAME_BYTES * 3) / 4) - 1024 * 1024;

/** The caller's change as a follower sends it; `undefined` when too large to send. */
async function memberChange(ctx: DirContext, own: OwnChange): Promise<MemberChange | undefined> {
  const changes: MemberChange['changes'] = own.changed.map((path) => [
    path,
    own.files.get(path) ?? null,
  ]);
  const blobs = new Map<string, Uint8Array>();
  let bytes = own.message.byteLength;
  for (const [, oid] of changes) {
    if (oid === null || blobs.has(oid)) continue;
    const content = await ctx.db.readBlob(oid);
    bytes += content.byteLength;
    if (bytes > MAX_CHANGE_BYTES) return undefined;
    blobs.set(oid, content);
  }
  const { base } = own;
  return {
    base: { generation: base.generation, head: base.head },
    changes,
    blobs,
    message: own.message,
    author: own.author,
  };
}

/**
 * The leader vanished after announcing `prepared`: contract §9's resolution of an ambiguous
 * CAS, by the follower itself. Landed → accepted with the round's head; provably lost →
 * `undefined` (queue again); else PUBLICATION_UNPROVEN.
 */
async function resolvePrepared(
  ctx: DirContext,
  prepared: PreparedWire,
): Promise<Queued | undefined> {
  const resolution = await resolve(
    ctx,
    {
      publication: prepared.publication,
      position: BigInt(prepared.position),
      conditionedOn: prepared.conditionedOn ?? undefined,
    },
    'ambiguous',
  );
  if (resolution.verdict === 'lost') return undefined;
  if (resolution.verdict === 'unproven') throw publicationUnproven();
  return {
    kind: 'followed',
    generation: BigInt(prepared.generation),
    head: prepared.head,
    files: undefined,
    commit: prepared.commit,
  };
}

/** Follows the leader of the gate, or takes the gate and leads (docs/engine.md, "Group commit"). */
async function queue(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
  gate: PublicationGate,
): Promise<Queued> {
  const address = groupEndpoint(ctx.cfg);
  const attempts = ctx.cfg.commitRetries + 1;
  let change: MemberChange | undefined;
  let solo = false;
  let polls = 0;
  for (;;) {
    call.signal?.throwIfAborted();
    if (gate.remainingMs <= 0) return { kind: 'alone' };
    if (!solo) {
      change ??= await memberChange(ctx, own);
      if (change === undefined) solo = true;
    }
    if (!solo && change !== undefined) {
      const joined = await joinGroup(address, change, {
        signal: call.signal,
        deadline: gate.deadline,
        // As a solo attempt does before its CAS: a kill after the round's CAS landed must not
        // make the next call publish these lines again.
        record: (prepared) =>
          own.record({
            generation: BigInt(prepared.generation),
            head: prepared.head,
            tree: prepared.tree,
          }),
      });
      if (joined.kind === 'accepted') {
        return { ...joined, kind: 'followed', commit: undefined };
      }
      if (joined.kind === 'unproven') {
        call.remoteAccepted = 'unknown';
        throw publicationUnproven();
      }
      // Not acknowledged, so in no CAS: the failure (say a full disk) is this call's answer.
      if (joined.kind === 'unrecorded') throw joined.error;
      if (joined.kind === 'withdrawn') {
        if (joined.why === 'aborted') call.signal?.throwIfAborted();
        return { kind: 'alone' };
      }
      if (joined.kind === 'excluded') {
        // `conflict` and `solo`: attempt alone, after the round, as if it had not joined.
        if (joined.reason !== 'later') solo = true;
        polls = 0;
        continue;
      }
      if (joined.kind === 'holder-gone') {
        if (joined.prepared !== undefined) {
          const resolved = await resolvePrepared(ctx, joined.prepared);
          if (resolved !== undefined) return resolved;
        }
        continue;
      }
      // refused: nobody leads a round; take the gate.
    }
    const waitMs =
      solo || polls >= GATE_POLLS ? gate.remainingMs : Math.min(gate.remainingMs, 5 * 2 ** polls);
    const release = await gate.take(waitMs);
    if (release === 'unavailable') return { kind: 'alone' };
    if (release === 'busy') {
      polls += 1;
      continue;
    }
    try {
      return { kind: 'led', step: await leadTurn(ctx, call, own, { address, attempts }) };
    } finally {
      await release();
    }
  }
}

/** One attempt alone: read R, merge it with L against the baseline, and publish the result. */
async function attemptAlone(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
  /** Whether the attempt holds the publication gate (no local writer races it). */
  gated: boolean,
): Promise<Step> {
  const remote = await loadRemote(ctx, call, own.base);
  call.stage = 'merge';
  const merged = await mergeOwn(ctx, own, remote);
  if (merged.kind !== 'merged') return merged;
  const outcome = await publishAttempt(ctx, call, remote, merged.result, own.message, {
    checkMoved: !gated,
    author: own.author,
    // A kill after the swap lands must not make the next call publish L's lines again.
    beforeCas: async (proposal) => {
      await own.record(proposal);
      return undefined;
    },
  });
  if (!outcome.accepted) return { kind: 'lost', observed: outcome.observed };
  return {
    kind: 'accepted',
    remote,
    merged: merged.result,
    own: merged.result,
    baseline: outcome.baseline,
    activeIncrements: outcome.activeIncrements,
  };
}

/** The published form of a step that ends the attempts. */
async function published(ctx: DirContext, step: Settled): Promise<Published> {
  if (step.kind !== 'accepted') return step;
  ctx.onPublished(step.activeIncrements);
  const files = await diffstat(step.remote.entries, step.own, ctx.db);
  return { kind: 'accepted', target: step.merged, baseline: step.baseline, files };
}

/** The diffstat of one commit against its parent (a follower that resolved alone). */
async function commitDiffstat(ctx: DirContext, commit: string): Promise<FileStat[]> {
  const { tree, parent } = await ctx.db.readCommit(commit);
  const parentTree = parent === undefined ? undefined : (await ctx.db.readCommit(parent)).tree;
  const before = parentTree === undefined ? new Map() : await ctx.db.readTree(parentTree);
  return diffstat(before, await ctx.db.readTree(tree), ctx.db);
}

/** Accepted in another leader's round: import it (the normal remote load). */
async function followed(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
  outcome: Extract<Queued, { kind: 'followed' }>,
): Promise<Published> {
  call.remoteAccepted = 'yes';
  const remote = await loadRemote(ctx, call, own.base);
  let target = remote.entries;
  let baseline = remote.baseline;
  if (remote.baseline.head !== outcome.head && (await ctx.db.has(outcome.head))) {
    const { tree } = await ctx.db.readCommit(outcome.head);
    target = await ctx.trees.read(ctx.db, tree);
    baseline = { generation: outcome.generation, head: outcome.head, tree };
  }
  const files =
    outcome.files ??
    (outcome.commit === undefined ? [] : await commitDiffstat(ctx, outcome.commit));
  return { kind: 'accepted', target, baseline, files, answered: outcome.generation };
}

/**
 * Publishes a participant's change: follow a leader's round, lead one, or attempt alone, until
 * the change is accepted, conflicts, is already in R, or the retries of contract §9 run out
 * (REMOTE_BUSY). L is not touched here: the participant rewrites it from the answer.
 */
export async function publishChange(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
): Promise<Published> {
  const gate = new PublicationGate(ctx, call);
  if (ctx.cfg.groupCommit && ctx.cfg.publicationGateMs > 0) {
    const queued = await queue(ctx, call, own, gate);
    if (queued.kind === 'followed') return followed(ctx, call, own, queued);
    if (queued.kind === 'led') return published(ctx, queued.step);
  }
  const attempts = ctx.cfg.commitRetries + 1;
  let observed: Current | undefined;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (attempt > 0) await backoffPrefetching(ctx, call, attempt - 1, observed);
    const step = await gate.around((gated) => attemptAlone(ctx, call, own, gated));
    if (step.kind === 'lost') {
      observed = step.observed;
      continue;
    }
    return published(ctx, step);
  }
  throw remoteBusy(attempts);
}
