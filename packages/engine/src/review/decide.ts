/**
 * A person's decision on a proposal (docs/review.md). Approve merges the proposed change onto
 * the accepted head through a reviewer's clean, pulled copy, exactly as `revert` merges an
 * inverse: three-way (base = R with the proposal's base bytes, one side = R with its proposed
 * bytes, the other = R), then an ordinary commit authored by the agent. Reject only records the
 * decision. Every record write is a compare-and-swap, and an approval is marked before it
 * publishes, so a kill or a retry never publishes twice and never loses the proposal.
 */
import { buildSuccess, DomainError, type SuccessResult } from '@slivingdoc/envelope';
import type { TreeEntries } from '@slivingdoc/merge';
import type { ObjectStore } from '@slivingdoc/store';
import type { CallState, DirContext } from '../context';
import { FAILPOINT, failpoint } from '../failpoints';
import { threeWayMerge } from '../notebook/merge';
import { loadRemote } from '../notebook/remote';
import { commitLocked } from '../participant/commit';
import { rewriteLocal } from '../participant/materialize';
import { scanCleanCopy } from '../participant/revert';
import { conflictIssues, type Entry, enterDirectory } from '../participant/sync';
import { mergeConflict } from '../verdicts';
import type { ProposalRecord } from './record';
import {
  CAS_ATTEMPTS,
  pruneDecided,
  recordBusy,
  requireProposal,
  type StoredProposal,
  writeProposal,
} from './store-io';

/** REVIEW · PROPOSAL_DECIDED, naming who decided (or who is approving) and when. */
export function proposalDecided(record: ProposalRecord): DomainError {
  const decision = record.decision;
  const what =
    decision === undefined
      ? `is being approved by ${JSON.stringify(record.approving?.by)} since ${record.approving?.at}`
      : `was already ${record.state} by ${JSON.stringify(decision.by)} at ${decision.at}${decision.generation === undefined ? '' : ` (published as generation ${decision.generation})`}`;
  return new DomainError({
    code: 'REVIEW',
    reason: 'PROPOSAL_DECIDED',
    message: `Proposal ${record.id} ${what}. Nothing was changed.`,
  });
}

/** REVIEW · STALE_REVISION, showing the current revision. */
function staleRevision(record: ProposalRecord, seen: number): DomainError {
  return new DomainError({
    code: 'REVIEW',
    reason: 'STALE_REVISION',
    message: `Proposal ${record.id} is at revision ${record.revision}, not ${seen}: the agent revised it since. Review revision ${record.revision} (slivingdoc proposals show ${record.id}) and approve that one. Nothing was changed.`,
  });
}

/**
 * How long an approval another approver marked keeps others out; past it the mark counts as
 * left by a killed process, and another approver takes over (resuming it, never doubling it).
 */
export const APPROVING_HOLD_MS = 10 * 60_000;

/** The last lines of an approved publication's message (the agent's message comes first). */
export function approvalTrailer(record: ProposalRecord, approver: string): string {
  return `\n\nApproved-by: ${approver}\nProposal: ${record.id} revision ${record.revision}`;
}

/** What an approved publication's message says of its approval (the trailer's fields). */
export interface ApprovalTrailer {
  approver: string;
  id: string;
  revision: number;
}

/**
 * Reads {@link approvalTrailer} back from the end of a publication's message. Anyone can write
 * such lines into a message: a caller that shows them as an approval confirms them against the
 * proposal's record.
 */
export function parseApprovalTrailer(message: string): ApprovalTrailer | undefined {
  const found = /\n\nApproved-by: ([^\n]+)\nProposal: (\S+) revision ([1-9]\d{0,15})$/.exec(
    message,
  );
  if (found === null) return undefined;
  return { approver: found[1]!, id: found[2]!, revision: Number(found[3]) };
}

/** What an approval or rejection is asked. */
export interface DecisionRequest {
  id: string;
  /** Who decides (the CLI's actor or the view's person). */
  by: string;
  /** The revision the reviewer saw; absent: the current one. */
  revision?: number | undefined;
  /** Reject's reason. */
  reason?: string | undefined;
}

function checkOpen(found: StoredProposal, request: DecisionRequest): void {
  const { record } = found;
  if (record.state !== 'open') throw proposalDecided(record);
  if (request.revision !== undefined && request.revision !== record.revision) {
    throw staleRevision(record, request.revision);
  }
}

/**
 * The proposals' cleanup after a decision; best effort: the decision is recorded, and the next
 * decision's cleanup deletes what this one could not.
 */
async function cleanUp(store: ObjectStore): Promise<void> {
  await pruneDecided(store).catch(() => undefined);
}

/** Rejects: records the decision (the bytes stay readable); publishes nothing. */
export async function rejectProposal(
  store: ObjectStore,
  request: DecisionRequest,
): Promise<ProposalRecord> {
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
    const found = await requireProposal(store, request.id);
    checkOpen(found, request);
    const { record } = found;
    if (record.approving !== undefined && !markExpired(record)) throw proposalDecided(record);
    const { approving: _dropped, ...rest } = record;
    const now = new Date().toISOString();
    const rejected: ProposalRecord = {
      ...rest,
      state: 'rejected',
      updatedAt: now,
      decision: {
        by: request.by,
        at: now,
        revision: record.revision,
        ...(request.reason === undefined ? {} : { reason: request.reason }),
      },
    };
    if ((await writeProposal(store, rejected, found.etag)) !== undefined) {
      await cleanUp(store);
      return rejected;
    }
  }
  throw recordBusy(`Proposal ${request.id}`);
}

/** True when an approval's mark is old enough to count as left by a killed process. */
export function markExpired(record: ProposalRecord): boolean {
  const at = Date.parse(record.approving?.at ?? '');
  return !Number.isFinite(at) || Date.now() - at > APPROVING_HOLD_MS;
}

/** R with the proposal's files set to `side` of each (base or proposed bytes). */
async function withFiles(
  ctx: DirContext,
  remote: TreeEntries,
  record: ProposalRecord,
  side: 'base' | 'content',
): Promise<TreeEntries> {
  const entries = new Map(remote);
  const present = record.files.filter((file) => file[side] !== null);
  // One call: many files become one pack instead of one object each.
  const oids = await ctx.db.writeBlobs(present.map((file) => file[side]!));
  for (const [i, file] of present.entries()) entries.set(file.path, oids[i]!);
  for (const file of record.files) if (file[side] === null) entries.delete(file.path);
  return entries;
}

/**
 * Whether the approval `record.approving` marks already published: a commit since the marked
 * head whose message ends with this approval's trailer.
 */
async function alreadyPublished(
  ctx: DirContext,
  head: string,
  record: ProposalRecord,
): Promise<boolean> {
  const marked = record.approving;
  if (marked === undefined || head === '') return false;
  const trailer = `\nProposal: ${record.id} revision ${marked.revision}`;
  let oid: string | undefined = head;
  for (let walked = 0; oid !== undefined && oid !== marked.fromHead && walked < 10_000; walked++) {
    const commit = await ctx.db.readCommit(oid);
    if (Buffer.from(commit.message).toString('utf8').endsWith(trailer)) return true;
    oid = commit.parent;
  }
  return false;
}

/** Records the approval as decided (retrying the compare-and-swap until it holds). */
async function recordApproved(
  store: ObjectStore,
  request: DecisionRequest,
  revision: number,
  generation: string,
): Promise<ProposalRecord> {
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
    const found = await requireProposal(store, request.id);
    if (found.record.state === 'approved') return found.record;
    const { approving: _dropped, ...rest } = found.record;
    if (found.record.revision !== revision) {
      // Revised after an expired mark: revision `revision` is published, the newer one stays
      // open for a person (approving it later merges cleanly over what is published).
      if ((await writeProposal(store, rest, found.etag)) !== undefined) return rest;
      continue;
    }
    const now = new Date().toISOString();
    const approved: ProposalRecord = {
      ...rest,
      state: 'approved',
      updatedAt: now,
      decision: { by: request.by, at: now, revision, generation },
    };
    if ((await writeProposal(store, approved, found.etag)) !== undefined) return approved;
  }
  // Published; the next approval of this proposal finds the publication and records it.
  throw recordBusy(`Proposal ${request.id}`);
}

/** The approval's success: the commit's result with what was decided. */
export type ApproveResult = SuccessResult & { approved: ProposalRecord };

/**
 * Approves through the locked, pulled, clean directory `entry`: refuses a decided proposal, a
 * stale revision, unpublished edits and a conflict (nothing published, the proposal stays
 * open, the files and ranges named); else publishes once and records the decision.
 */
export async function approveLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  request: DecisionRequest,
): Promise<ApproveResult> {
  const store = ctx.cfg.store;
  const local = await scanCleanCopy(ctx, call, entry);
  const remote = await loadRemote(ctx, call, entry.rollback);

  let found = await requireProposal(store, request.id);
  checkOpen(found, request);
  let record = found.record;
  const marked = record.approving;
  if (marked !== undefined && marked.by !== request.by && !markExpired(record)) {
    throw proposalDecided(record);
  }
  if (marked !== undefined && (await alreadyPublished(ctx, remote.baseline.head, record))) {
    const approved = await recordApproved(
      store,
      request,
      marked.revision,
      remote.baseline.generation.toString(),
    );
    const files: never[] = [];
    const generation = remote.baseline.generation;
    return {
      ...buildSuccess({ path: ctx.dir, generation, files, sets: ctx.policy.sets }),
      approved,
    };
  }
  // Mark first: a process killed from here on is resumed by the next approval of any host.
  const mark: ProposalRecord = {
    ...record,
    approving: {
      by: request.by,
      at: new Date().toISOString(),
      revision: record.revision,
      fromHead: remote.baseline.head === '' ? null : remote.baseline.head,
    },
  };
  const markedEtag = await writeProposal(store, mark, found.etag);
  if (markedEtag === undefined) {
    // Another reviewer or a revision got there first: decide again on what is stored now.
    found = await requireProposal(store, request.id);
    checkOpen(found, request);
    throw proposalDecided(found.record);
  }
  record = mark;
  await failpoint(ctx.cfg.failpoints, FAILPOINT.approveAfterMark);

  call.stage = 'merge';
  const base = await withFiles(ctx, remote.entries, record, 'base');
  const ours = await withFiles(ctx, remote.entries, record, 'content');
  const merged = await threeWayMerge(ctx, base, ours, remote.entries);
  if (merged.conflicts.length > 0) {
    const { approving: _dropped, ...open } = record;
    await writeProposal(store, open, markedEtag);
    throw mergeConflict(await conflictIssues(ctx, merged.conflicts, merged.result));
  }
  await ctx.db.persistStaged();
  await rewriteLocal(ctx, call, {
    local,
    target: merged.result,
    previous: entry.base,
    next: remote.baseline,
  });
  const message = Buffer.from(`${record.message}${approvalTrailer(record, request.by)}`, 'utf8');
  const published = await commitLocked(ctx, call, await enterDirectory(ctx), message, record.actor);
  await failpoint(ctx.cfg.failpoints, FAILPOINT.approveAfterPublish);
  const approved = await recordApproved(
    store,
    request,
    record.revision,
    String(published.generation),
  );
  await cleanUp(store);
  return { ...published, approved };
}
