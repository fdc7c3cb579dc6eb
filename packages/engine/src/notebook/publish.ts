/**
 * One publication attempt (contract §7, §9): commit object, pack, upload, compare-and-swap of
 * `current`, and the resolution of a lost or ambiguous answer through publication ids.
 */
import { createCheckpointPack, createIncrementPack, type TreeEntries } from '@slivingdoc/merge';
import {
  appendIncrement,
  CURRENT_KEY,
  encodeManifest,
  firstManifest,
  hasPublication,
  type IncrementDescriptor,
  type Manifest,
  newUuidV7,
  StoreError,
} from '@slivingdoc/store';
import type { CallState, DirContext } from '../context';
import { publicationUnproven, storageFailure, storeDiskDetail } from '../errors';
import { FAILPOINT, failpoint } from '../failpoints';
import type { Baseline } from './baseline';
import { positionHeldByOther } from './chain';
import {
  type Current,
  type RemoteView,
  readCurrent,
  rememberVerified,
  rememberWritten,
} from './remote';
import { sha256Hex } from './sha256';

/** The outcome of one attempt: accepted (with the new baseline) or provably lost. */
export type Attempt =
  | { accepted: true; baseline: Baseline; activeIncrements: number }
  | {
      accepted: false;
      /** `current` as the resolution read it (the next attempt can prefetch its packs). */
      observed: Current | undefined;
      /** True when `beforeCas` withheld the CAS: nothing was sent, no race was lost. */
      withheld?: true;
    };

interface Proposal {
  manifest: Manifest;
  publication: string;
  /** The chain position the proposal targets. */
  position: bigint;
  key: string;
  pack: Uint8Array;
  kind: 'checkpoint' | 'increment';
  conditionedOn: string | undefined;
}

async function propose(ctx: DirContext, remote: RemoteView, head: string): Promise<Proposal> {
  const publication = newUuidV7();
  const observed = remote.current;
  if (observed === undefined) {
    const pack = await createCheckpointPack(ctx.db, { head });
    const checkpointId = newUuidV7();
    const manifest = firstManifest({
      head,
      sha256: sha256Hex(pack),
      size: BigInt(pack.byteLength),
      checkpointId,
      publication,
    });
    return {
      manifest,
      publication,
      position: 1n,
      key: manifest.checkpoint.key,
      pack,
      kind: 'checkpoint',
      conditionedOn: undefined,
    };
  }
  const pack = await createIncrementPack(ctx.db, { head, parentHead: observed.manifest.head });
  const manifest = appendIncrement(observed.manifest, {
    head,
    sha256: sha256Hex(pack),
    size: BigInt(pack.byteLength),
    publication,
  });
  const increment = manifest.increments.at(-1) as IncrementDescriptor;
  return {
    manifest,
    publication,
    position: increment.generation,
    key: increment.key,
    pack,
    kind: 'increment',
    conditionedOn: observed.etag,
  };
}

async function sendCas(ctx: DirContext, proposal: Proposal): Promise<unknown> {
  const body = encodeManifest(proposal.manifest);
  const answer = await (proposal.conditionedOn === undefined
    ? ctx.cfg.store.createIfAbsent(CURRENT_KEY, body)
    : ctx.cfg.store.replaceIfMatch(CURRENT_KEY, body, proposal.conditionedOn));
  rememberWritten(ctx.cfg.store, body, proposal.manifest);
  return answer;
}

/**
 * Reads `current` once more before the upload: when it no longer is the one the proposal is
 * conditioned on, the CAS can only fail, so the attempt has lost without uploading a pack or
 * sending the CAS. A failed read decides nothing (the CAS and its resolution will).
 */
async function currentMoved(
  ctx: DirContext,
  remote: RemoteView,
): Promise<{ lost: boolean; now?: Current | undefined }> {
  let now: Current | undefined;
  try {
    now = await readCurrent(ctx.cfg.store);
  } catch {
    return { lost: false };
  }
  return { lost: now?.etag !== remote.current?.etag, now };
}

/**
 * What an attempt is about to propose, handed to `beforeCas`: where it lands (publication id,
 * chain position, conditioned ETag) and the baseline it makes if accepted.
 */
export type CasTarget = ProposalTarget & Baseline;

/**
 * Runs after the pack upload, right before the CAS is sent; resolving to `withhold` keeps the
 * CAS unsent (see {@link publishHead}).
 */
export type BeforeCas = (target: CasTarget) => Promise<'withhold' | undefined>;

/** What resolving an unanswered or refused CAS needs to know about the proposal. */
export interface ProposalTarget {
  publication: string;
  /** The chain position the proposal targets. */
  position: bigint;
  /** The ETag the CAS was conditioned on (absent = create-if-absent). */
  conditionedOn: string | undefined;
}

/** Whether a proposal landed, provably did not, or cannot be told. */
export type Resolution = { verdict: 'accepted' | 'lost' | 'unproven'; now?: Current | undefined };

/**
 * After a 412 or an ambiguous answer: found in active or retained chains = accepted; otherwise
 * lost only when provable (the ETag we conditioned on is still current, or another publication
 * holds our target position), else unproven.
 */
export async function resolve(
  ctx: DirContext,
  proposal: ProposalTarget,
  answer: 'precondition' | 'ambiguous',
): Promise<Resolution> {
  let now: Current | undefined;
  try {
    now = await readCurrent(ctx.cfg.store);
  } catch {
    return { verdict: answer === 'precondition' ? 'lost' : 'unproven' };
  }
  if (now !== undefined && hasPublication(now.manifest, proposal.publication))
    return { verdict: 'accepted', now };
  if (answer === 'precondition') return { verdict: 'lost', now };
  const unchanged =
    proposal.conditionedOn === undefined ? now === undefined : now?.etag === proposal.conditionedOn;
  if (unchanged) return { verdict: 'lost', now };
  if (
    now !== undefined &&
    positionHeldByOther(now.manifest, proposal.position, proposal.publication)
  )
    return { verdict: 'lost', now };
  return { verdict: 'unproven', now };
}

/**
 * Publishes `result` on top of `remote`: builds the commit (parent = R's head, time = attempt
 * start in whole UTC seconds) and hands it to {@link publishHead}.
 */
export async function publishAttempt(
  ctx: DirContext,
  call: CallState,
  remote: RemoteView,
  result: TreeEntries,
  message: Uint8Array,
  options: {
    checkMoved: boolean;
    author?: string | undefined;
    /** Runs after the upload, right before the compare-and-swap is sent (see {@link publishHead}). */
    beforeCas?: BeforeCas;
  },
): Promise<Attempt> {
  call.stage = 'publish';
  const time = Math.floor(Date.now() / 1000);
  // On top of R: only the directories holding a changed path are re-encoded. Staged: a
  // proposal that loses writes nothing to P; an accepted one is written before L is rewritten.
  const tree = await ctx.db.writeTree(
    result,
    { tree: remote.baseline.tree, entries: remote.entries },
    { staged: true },
  );
  const head = await ctx.db.writeCommit(
    {
      tree,
      parent: remote.current?.manifest.head,
      message,
      time,
      ...(options.author === undefined ? {} : { author: options.author }),
    },
    { staged: true },
  );
  return publishHead(ctx, call, remote, { head, tree }, options);
}

/**
 * Publishes the staged commit `head` (tree `tree`, descending from R's head through one or more
 * commits) on top of `remote`: the pack, a fresh publication id; upload; CAS. Once the CAS is
 * sent the attempt runs to completion regardless of cancellation. `checkMoved` re-reads
 * `current` before the upload (see {@link currentMoved}); an attempt holding the publication
 * gate skips it: no local writer can have moved `current`, and on S3 the read is a round trip
 * inside the turn every other local writer waits for. `beforeCas` runs after the upload and
 * before the CAS is sent (a group commit tells its members the publication id there); when it
 * answers `withhold` the CAS is not sent and the attempt ends unaccepted (its pack is orphaned,
 * never referenced), as a group does when a member did not record its input in time.
 */
export async function publishHead(
  ctx: DirContext,
  call: CallState,
  remote: RemoteView,
  built: { head: string; tree: string },
  options: {
    checkMoved: boolean;
    beforeCas?: BeforeCas;
  },
): Promise<Attempt> {
  call.stage = 'publish';
  const { head, tree } = built;
  const proposal = await propose(ctx, remote, head);
  call.signal?.throwIfAborted();
  if (options.checkMoved) {
    const moved = await currentMoved(ctx, remote);
    if (moved.lost) return { accepted: false, observed: moved.now };
  }
  try {
    await ctx.cfg.store.putImmutable(proposal.key, proposal.pack, {
      'slivingdoc-sha256': sha256Hex(proposal.pack),
      'slivingdoc-size': String(proposal.pack.byteLength),
      'slivingdoc-kind': proposal.kind,
      'slivingdoc-generation': String(proposal.position),
    });
  } catch (err) {
    throw err instanceof StoreError ? storageFailure(err) : err;
  }
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterPackUpload);
  call.signal?.throwIfAborted();
  const before = await options.beforeCas?.({
    publication: proposal.publication,
    position: proposal.position,
    conditionedOn: proposal.conditionedOn,
    generation: proposal.manifest.generation,
    head,
    tree,
  });
  if (before === 'withhold') return { accepted: false, observed: remote.current, withheld: true };
  call.remoteAccepted = 'unknown';
  const answer = sendCas(ctx, proposal).then(
    () => 'accepted' as const,
    (err: unknown) => err,
  );
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterCasSent);
  const outcome = await answer;
  await failpoint(ctx.cfg.failpoints, FAILPOINT.afterCasAnswered);
  let resolution: Resolution;
  if (outcome === 'accepted') resolution = { verdict: 'accepted' };
  else if (outcome instanceof StoreError && outcome.kind === 'precondition-failed') {
    resolution = await resolve(ctx, proposal, 'precondition');
  } else if (outcome instanceof StoreError && outcome.kind === 'ambiguous') {
    resolution = await resolve(ctx, proposal, 'ambiguous');
  } else if (
    outcome instanceof StoreError &&
    (outcome.kind === 'unreachable' ||
      outcome.kind === 'access-denied' ||
      storeDiskDetail(outcome) !== undefined)
  ) {
    // Refused before the request was sent (or rejected outright, or the embedded store's disk
    // refused the new version before linking it): nothing landed.
    call.remoteAccepted = 'no';
    throw storageFailure(outcome);
  } else {
    resolution = await resolve(ctx, proposal, 'ambiguous');
  }
  if (resolution.verdict === 'unproven') throw publicationUnproven(outcome);
  if (resolution.verdict === 'lost') {
    call.remoteAccepted = 'no';
    return { accepted: false, observed: resolution.now };
  }
  call.remoteAccepted = 'yes';
  // Built here from R's verified closure and scanned local blobs.
  rememberVerified(ctx, head);
  return {
    accepted: true,
    baseline: { generation: proposal.manifest.generation, head, tree },
    activeIncrements: proposal.manifest.increments.length,
  };
}
