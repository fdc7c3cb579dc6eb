/**
 * notes_commit under review (docs/review.md, contract §2 "Queue mode"): the change A→L of a
 * directory whose commit the review setting queues is stored as a proposal; nothing is
 * published, L and its baseline A stay as they are (nothing of R is merged in, so no conflict
 * markers are ever written). The directory's next call learns what a person decided.
 */
import {
  buildSuccess,
  DomainError,
  type ProposalOutcome,
  type SuccessResult,
} from '@slivingdoc/envelope';
import { diffstat, type TreeEntries } from '@slivingdoc/merge';
import type { ObjectStore } from '@slivingdoc/store';
import type { CallState, DirContext } from '../context';
import { markerIssues } from '../notebook/merge';
import { commitLocked, refuseReadOnlyChanges } from '../participant/commit';
import { changedPaths, scanLocal } from '../participant/local';
import type { Entry } from '../participant/sync';
import { unresolvedMarkers, unsupportedFiles } from '../verdicts';
import { markExpired } from './decide';
import type { ProposalFile, ProposalRecord, ProposalState } from './record';
import { decideReview, mayQueue, type ReviewMode, type ReviewSetting } from './setting';
import { participantOf, proposalIdOf, readSlot, type SlotMemo, writeSlot } from './slot';
import {
  CAS_ATTEMPTS,
  listProposals,
  type ReviewReader,
  readProposal,
  recordBusy,
  writeProposal,
} from './store-io';

/** Who is committing, as review sees it. */
export interface ReviewCaller {
  /** The author name of the commit. */
  actor: string;
  /** True when the actor is authenticated (a hub token), so actor rules bind. */
  authenticated: boolean;
  /** A stricter mode the caller's credential carries (`token add --review queue`). */
  floor?: ReviewMode | undefined;
}

/** How many open proposals one actor may hold (one per directory; this bounds directories). */
export const MAX_OPEN_PER_ACTOR = 64;

/** REVIEW · PROPOSAL_BEING_APPROVED: the open proposal is being published right now. */
function beingApproved(id: string): DomainError {
  return new DomainError({
    code: 'REVIEW',
    reason: 'PROPOSAL_BEING_APPROVED',
    message: `A person is approving your proposal ${id} right now, so it cannot be revised; nothing was proposed or published and your edits are still in the notebook directory. Call notes_commit again shortly: it reports the approval and proposes what is left.`,
  });
}

/** REVIEW · TOO_MANY_PROPOSALS. */
function tooManyProposals(actor: string, open: number): DomainError {
  return new DomainError({
    code: 'REVIEW',
    reason: 'TOO_MANY_PROPOSALS',
    message: `The actor ${JSON.stringify(actor)} already has ${open} open proposals, the most allowed; a person must decide some of them first. Nothing was proposed or published; your edits are still in the notebook directory.`,
  });
}

function subjectOf(caller: ReviewCaller) {
  return {
    authenticatedActor: caller.authenticated ? caller.actor : undefined,
    floor: caller.floor,
  };
}

/** Whether review may queue anything for `caller` (the tool texts say so while it does). */
export function reviewApplies(setting: ReviewSetting, caller: ReviewCaller): boolean {
  return mayQueue(setting, subjectOf(caller));
}

/** The outcome a decided record reports to its directory. */
function outcomeOf(record: ProposalRecord): ProposalOutcome | undefined {
  const decision = record.decision;
  if (record.state === 'open' || decision === undefined) return undefined;
  return {
    proposalId: record.id,
    revision: decision.revision,
    status: record.state,
    by: decision.by,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
    ...(decision.generation === undefined ? {} : { generation: decision.generation }),
  };
}

/** What the directory's next call learns: a decision, and the base it must merge from. */
export interface Learned {
  outcome: ProposalOutcome;
  /** Approved: the entry whose base holds the proposed bytes (the self-merge rule). */
  entry: Entry;
}

/**
 * docs/review.md, "after approval": the directory's change is already in R, so its next merge
 * takes the proposed bytes as the base of those files. L then differs from that base only by
 * what the agent wrote since, and R only by what others did: the change never conflicts with
 * itself, even when the agent kept editing those files.
 */
async function approvedBase(ctx: DirContext, entry: Entry, record: ProposalRecord): Promise<Entry> {
  const baseEntries: TreeEntries = new Map(entry.baseEntries);
  const present = record.files.filter((file) => file.content !== null);
  const oids = await ctx.db.writeBlobs(present.map((file) => file.content!));
  for (const [i, file] of present.entries()) baseEntries.set(file.path, oids[i]!);
  for (const file of record.files) if (file.content === null) baseEntries.delete(file.path);
  return { ...entry, baseEntries };
}

/**
 * Learns whether a person decided the directory's open proposal since its last call: one GET
 * when P says one is open, none otherwise. A decided proposal is reported once; P then moves
 * the directory on to its next number.
 */
export async function learnOutcome(ctx: DirContext, entry: Entry): Promise<Learned | undefined> {
  const memo = await readSlot(ctx);
  if (!memo.open) return undefined;
  const id = proposalIdOf(participantOf(ctx), memo.seq);
  const found = await readProposal(ctx.cfg.store, id);
  if (found === undefined) {
    await writeSlot(ctx, { seq: memo.seq, open: false });
    return undefined;
  }
  const outcome = outcomeOf(found.record);
  if (outcome === undefined) return undefined;
  const learned: Learned = {
    outcome,
    entry: outcome.status === 'approved' ? await approvedBase(ctx, entry, found.record) : entry,
  };
  return learned;
}

/**
 * notes_pull: reports a decision made since the directory's last call, merging an approved
 * change from the proposed bytes as its base (the self-merge rule above).
 */
export async function pullReviewed(
  ctx: DirContext,
  entry: Entry,
  pull: (entry: Entry) => Promise<SuccessResult>,
): Promise<SuccessResult> {
  const memo = await readSlot(ctx);
  const learned = memo.open ? await learnOutcome(ctx, entry) : undefined;
  const result = await pull(learned?.entry ?? entry);
  if (learned === undefined) return result;
  await acknowledge(ctx, memo);
  return { ...result, proposalOutcome: learned.outcome };
}

/** What `status` shows of a directory's proposal. */
export interface DirectoryProposal {
  id: string;
  revision: number;
  /** `open`: waiting for a person; decided: the directory's next call reports it. */
  state: ProposalState;
}

/**
 * The directory's proposal whose outcome it has not yet reported (one GET when P says there is
 * one, none otherwise); null when there is none.
 */
export async function directoryProposal(ctx: DirContext): Promise<DirectoryProposal | null> {
  const memo = await readSlot(ctx);
  if (!memo.open) return null;
  const found = await readProposal(ctx.cfg.store, proposalIdOf(participantOf(ctx), memo.seq));
  if (found === undefined) return null;
  const { id, revision, state } = found.record;
  return { id, revision, state };
}

/** Records in P that the outcome of proposal number `seq` was reported. */
export function acknowledge(ctx: DirContext, memo: SlotMemo): Promise<void> {
  return writeSlot(ctx, { seq: memo.seq + 1, open: false });
}

async function proposalFiles(
  ctx: DirContext,
  base: TreeEntries,
  local: TreeEntries,
  changed: string[],
): Promise<ProposalFile[]> {
  const bytes = (oid: string | undefined) =>
    oid === undefined ? Promise.resolve(null) : ctx.db.readBlob(oid);
  const files: ProposalFile[] = [];
  for (const path of [...changed].sort()) {
    files.push({ path, base: await bytes(base.get(path)), content: await bytes(local.get(path)) });
  }
  return files;
}

async function openCount(store: ObjectStore, actor: string): Promise<number> {
  const listed = await listProposals(store);
  return listed.filter(
    (p) => 'record' in p && p.record.state === 'open' && p.record.actor === actor,
  ).length;
}

/**
 * Stores the change as the directory's open proposal: revises it when one is open, else
 * creates the next number. Every write is a compare-and-swap; a lost one re-reads and decides
 * again, so a retried or concurrent call never stacks a duplicate.
 */
async function storeProposal(
  ctx: DirContext,
  draft: Omit<ProposalRecord, 'id' | 'revision' | 'state' | 'createdAt' | 'updatedAt'>,
): Promise<ProposalRecord> {
  const store = ctx.cfg.store;
  const participant = participantOf(ctx);
  let { seq } = await readSlot(ctx);
  for (let attempt = 0; attempt < CAS_ATTEMPTS + MAX_DECIDED_SKIPPED; attempt += 1) {
    const id = proposalIdOf(participant, seq);
    const found = await readProposal(store, id);
    const now = new Date().toISOString();
    if (found !== undefined && found.record.state !== 'open') {
      seq += 1;
      continue;
    }
    // Revising now would change what the approval is publishing: the agent calls again.
    if (found?.record.approving !== undefined && !markExpired(found.record)) {
      throw beingApproved(found.record.id);
    }
    if (found === undefined) {
      const open = await openCount(store, draft.actor);
      if (open >= MAX_OPEN_PER_ACTOR) throw tooManyProposals(draft.actor, open);
    }
    const record: ProposalRecord = {
      ...draft,
      id,
      revision: found === undefined ? 1 : found.record.revision + 1,
      state: 'open',
      createdAt: found?.record.createdAt ?? now,
      updatedAt: now,
    };
    if ((await writeProposal(store, record, found?.etag)) !== undefined) {
      await writeSlot(ctx, { seq, open: true });
      return record;
    }
  }
  throw recordBusy('The directory’s proposal');
}

/**
 * Decided proposals a lost P makes a directory step over before it finds its next number; a
 * directory with more is refused as busy rather than walking on unbounded.
 */
const MAX_DECIDED_SKIPPED = 10_000;

/**
 * notes_commit when the review setting may queue it: learns any decision first, then either
 * commits as usual (`direct` for these files) or stores the proposal.
 */
export async function commitReviewed(
  ctx: DirContext,
  call: CallState,
  entered: Entry,
  message: Uint8Array,
  caller: ReviewCaller,
  reader: ReviewReader,
  sync: (entry: Entry) => Promise<Entry>,
): Promise<SuccessResult> {
  const setting = await reader.read();
  const memo = await readSlot(ctx);
  if (!memo.open && !reviewApplies(setting, caller)) {
    return commitLocked(ctx, call, entered, message, caller.actor);
  }
  const learned = await learnOutcome(ctx, entered);
  // An approved change is merged in first (it is in R now); a rejected one proposes nothing
  // this call, so a rejected change is never silently proposed again.
  const entry = learned?.outcome.status === 'approved' ? await sync(learned.entry) : entered;
  if (learned !== undefined) await acknowledge(ctx, memo);
  const withOutcome = (result: SuccessResult): SuccessResult =>
    learned === undefined ? result : { ...result, proposalOutcome: learned.outcome };
  if (learned?.outcome.status === 'rejected') {
    return withOutcome(
      buildSuccess({
        path: ctx.dir,
        generation: entry.base.generation,
        files: [],
        sets: ctx.policy.sets,
      }),
    );
  }
  call.stage = 'scan';
  const local = await scanLocal(ctx);
  if (local.problems.length > 0) throw unsupportedFiles(local.problems);
  const changed = changedPaths(entry.baseEntries, local.entries);
  const mode = decideReview(setting, { ...subjectOf(caller), changed });
  if (mode === 'direct' || changed.length === 0) {
    return withOutcome(await commitLocked(ctx, call, entry, message, caller.actor));
  }
  const markers = await markerIssues(ctx, local.entries, changed);
  if (markers.length > 0) throw unresolvedMarkers(markers);
  await refuseReadOnlyChanges(ctx, call, entry, local, changed);
  const record = await storeProposal(ctx, {
    version: 1,
    directory: participantOf(ctx),
    actor: caller.actor,
    baseGeneration: entry.base.generation.toString(),
    message: Buffer.from(message).toString('utf8'),
    files: await proposalFiles(ctx, entry.baseEntries, local.entries, changed),
  });
  const result = buildSuccess({
    path: ctx.dir,
    generation: entry.base.generation,
    files: await diffstat(entry.baseEntries, local.entries, ctx.db),
    sets: ctx.policy.sets,
  });
  return withOutcome({
    ...result,
    status: 'pending',
    proposalId: record.id,
    revision: record.revision,
  });
}
