/**
 * A person's decision on a proposal (docs/review.md). Approve merges the proposed change onto
 * the accepted head R, exactly as `revert` merges an inverse: three-way (base = R with the
 * proposal's base bytes, one side = R with its proposed bytes, the other = R). The merged tree
 * is then published as the change of a commit authored by the agent, through the publication
 * queue's merge and compare-and-swap; the reviewer's clean copy is only checked, never written,
 * and catches up at its next pull. Reject only records the decision. Every record write is a
 * compare-and-swap, and an approval is marked before it publishes, so a kill or a retry never
 * publishes twice and never loses the proposal.
 */
import { buildSuccess, DomainError, type SuccessResult } from '@slivingdoc/envelope';
import type { TreeEntries } from '@slivingdoc/merge';
import type { ObjectStore } from '@slivingdoc/store';
import type { CallState, DirContext } from '../context';
import { FAILPOINT, failpoint } from '../failpoints';
import { markerIssues, threeWayMerge } from '../notebook/merge';
import { answeredGeneration, publishChange } from '../notebook/publication/queue';
import type { OwnChange } from '../notebook/publication/round';
import { loadRemote, type RemoteView } from '../notebook/remote';
import { changedPaths } from '../participant/local';
import { scanCleanCopy } from '../participant/revert';
import { conflictIssues, type Entry } from '../participant/sync';
import { mergeConflict, readOnlyPath, unresolvedMarkers } from '../verdicts';
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

/** READ_ONLY_PATH · CHANGE_OUTSIDE_WRITABLE: the proposal changes paths this reviewer may not. */
function approvalOutsideWritable(paths: string[]): DomainError {
  return readOnlyPath(
    paths.map((path) => ({ path, reason: 'READ_ONLY_PATH', ranges: [] })),
    'The proposal changes paths that are read-only for this participant; nothing was published and the proposal stays open.',
  );
}

/**
 * The approved change as the publication queue takes a commit's: the merged tree against R,
 * authored by the agent, the approval's trailer ending its message.
 */
function approvedChange(
  remote: RemoteView,
  merged: TreeEntries,
  changed: string[],
  record: ProposalRecord,
  approver: string,
): OwnChange {
  return {
    base: remote.baseline,
    baseEntries: remote.entries,
    files: merged,
    changed,
    message: Buffer.from(`${record.message}${approvalTrailer(record, approver)}`, 'utf8'),
    author: record.actor,
    // A commit records here that L holds what it publishes, so that a kill after the swap does
    // not publish L's lines again. An approval never writes L (the clean copy stays at its
    // baseline, clean), so there is nothing to record: its own guard against publishing twice
    // is the proposal's mark and the trailer that `alreadyPublished` finds.
    record: async () => undefined,
  };
}

/**
 * Approves through the locked, pulled, clean directory `entry`: refuses a decided proposal, a
 * stale revision, unpublished edits and a conflict (nothing published, the proposal stays
 * open, the files and ranges named); else publishes once and records the decision. The
 * directory is only checked: what is published comes from the merge, not from the copy.
 */
export async function approveLocked(
  ctx: DirContext,
  call: CallState,
  entry: Entry,
  request: DecisionRequest,
): Promise<ApproveResult> {
  const store = ctx.cfg.store;
  await scanCleanCopy(ctx, call, entry);
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
  /** Publishes nothing: the mark is lifted (best effort: it expires anyway) and `refusal` thrown. */
  const refuse = async (refusal: DomainError): Promise<never> => {
    const { approving: _dropped, ...open } = record;
    await writeProposal(store, open, markedEtag).catch(() => undefined);
    throw refusal;
  };
  await failpoint(ctx.cfg.failpoints, FAILPOINT.approveAfterMark);

  call.stage = 'merge';
  const base = await withFiles(ctx, remote.entries, record, 'base');
  const ours = await withFiles(ctx, remote.entries, record, 'content');
  const merged = await threeWayMerge(ctx, base, ours, remote.entries);
  if (merged.conflicts.length > 0)
    return refuse(mergeConflict(await conflictIssues(ctx, merged.conflicts, merged.result)));
  // What a commit of the merged tree would refuse, refused before anything is published.
  const changed = changedPaths(remote.entries, merged.result);
  const outside = changed.filter((path) => !ctx.policy.isWritable(path));
  if (outside.length > 0) return refuse(approvalOutsideWritable(outside));
  const markers = await markerIssues(ctx, merged.result, changed);
  if (markers.length > 0) return refuse(unresolvedMarkers(markers));

  // Merged again onto whatever R is at the compare-and-swap, as every commit's change is.
  const published =
    changed.length === 0
      ? ({ kind: 'unchanged', remote } as const)
      : await publishChange(
          ctx,
          call,
          approvedChange(remote, merged.result, changed, record, request.by),
        );
  if (published.kind === 'conflict') {
    const issues = await conflictIssues(ctx, published.conflicts, published.merged);
    return refuse(mergeConflict(issues));
  }
  await failpoint(ctx.cfg.failpoints, FAILPOINT.approveAfterPublish);
  const { generation, files } =
    published.kind === 'accepted'
      ? { generation: answeredGeneration(published), files: published.files }
      : { generation: published.remote.baseline.generation, files: [] };
  const approved = await recordApproved(store, request, record.revision, String(generation));
  await cleanUp(store);
  return {
    ...buildSuccess({ path: ctx.dir, generation, files, sets: ctx.policy.sets }),
    approved,
  };
}
