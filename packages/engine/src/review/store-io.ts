/**
 * Reading and writing the review setting and the proposal records in the store. Both are
 * conditional keys: every write is a compare-and-swap, so two hosts never overwrite each other.
 */
import { DomainError } from '@slivingdoc/envelope';
import {
  isProposalId,
  isStoreError,
  type ObjectStore,
  PROPOSALS_NAMESPACE,
  proposalKey,
  REVIEW_KEY,
} from '@slivingdoc/store';
import { decodeProposal, encodeProposal, type ProposalRecord } from './record';
import {
  applyRule,
  DEFAULT_REVIEW,
  encodeReviewSetting,
  parseReviewSetting,
  type ReviewRule,
  type ReviewSetting,
} from './setting';

/**
 * The setting, read on every call that needs it: one GET of a small object, parsed only when
 * its ETag changed. A failure to read it propagates (the call fails closed); an unparsable
 * setting is REVIEW · SETTING_INVALID.
 */
export class ReviewReader {
  #cached: { etag: string; setting: ReviewSetting } | undefined;

  constructor(private readonly store: ObjectStore) {}

  async read(): Promise<ReviewSetting> {
    const found = await this.store.get(REVIEW_KEY);
    if (found === undefined) return DEFAULT_REVIEW;
    if (this.#cached?.etag === found.etag) return this.#cached.setting;
    const setting = parseReviewSetting(found.body);
    this.#cached = { etag: found.etag, setting };
    return setting;
  }
}

/** What `review show` reports: the setting, or why it cannot be parsed. */
export type ReviewShown =
  | { state: 'default' | 'stored'; setting: ReviewSetting }
  | { state: 'invalid'; problem: string };

/** The stored setting as `review show` reports it. */
export async function showReview(store: ObjectStore): Promise<ReviewShown> {
  const found = await store.get(REVIEW_KEY);
  if (found === undefined) return { state: 'default', setting: DEFAULT_REVIEW };
  try {
    return { state: 'stored', setting: parseReviewSetting(found.body) };
  } catch (err) {
    if (err instanceof DomainError) return { state: 'invalid', problem: err.message };
    throw err;
  }
}

/** Attempts at one compare-and-swap of a small record before giving up. */
export const CAS_ATTEMPTS = 16;

/** REMOTE_BUSY · RETRIES_EXHAUSTED: a review record kept changing under every attempt. */
export function recordBusy(what: string): DomainError {
  return new DomainError({
    code: 'REMOTE_BUSY',
    reason: 'RETRIES_EXHAUSTED',
    message: `${what} kept changing under each of ${CAS_ATTEMPTS} attempts; nothing was changed.`,
  });
}

/**
 * Applies `rule` to the stored setting (an unparsable one is replaced from the default, which
 * is how a person repairs it) and writes it with a compare-and-swap. Returns the new setting.
 */
export async function setReview(store: ObjectStore, rule: ReviewRule): Promise<ReviewSetting> {
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
    const found = await store.get(REVIEW_KEY);
    let previous = DEFAULT_REVIEW;
    if (found !== undefined) {
      try {
        previous = parseReviewSetting(found.body);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
    const next = applyRule(previous, rule);
    try {
      const body = encodeReviewSetting(next);
      if (found === undefined) await store.createIfAbsent(REVIEW_KEY, body);
      else await store.replaceIfMatch(REVIEW_KEY, body, found.etag);
      return next;
    } catch (err) {
      if (isStoreError(err) && err.kind === 'precondition-failed') continue;
      throw err;
    }
  }
  throw recordBusy('The review setting');
}

/** A stored proposal with the ETag its next compare-and-swap conditions on. */
export interface StoredProposal {
  record: ProposalRecord;
  etag: string;
}

/** REVIEW · PROPOSAL_NOT_FOUND. */
export function proposalNotFound(id: string): DomainError {
  return new DomainError({
    code: 'REVIEW',
    reason: 'PROPOSAL_NOT_FOUND',
    message: `No proposal ${JSON.stringify(id)} is stored (see slivingdoc proposals list). Nothing was changed.`,
  });
}

/** The proposal `id`, or undefined when none is stored (a malformed one throws). */
export async function readProposal(
  store: ObjectStore,
  id: string,
): Promise<StoredProposal | undefined> {
  if (!isProposalId(id)) return undefined;
  const found = await store.get(proposalKey(id));
  if (found === undefined) return undefined;
  return { record: decodeProposal(id, found.body), etag: found.etag };
}

/** The proposal `id`; throws REVIEW · PROPOSAL_NOT_FOUND when there is none. */
export async function requireProposal(store: ObjectStore, id: string): Promise<StoredProposal> {
  const found = await readProposal(store, id);
  if (found === undefined) throw proposalNotFound(id);
  return found;
}

/**
 * Writes `record` conditioned on `etag` (undefined: only if absent): its new ETag, or undefined
 * when another writer got there first (the caller re-reads and decides again).
 */
export async function writeProposal(
  store: ObjectStore,
  record: ProposalRecord,
  etag: string | undefined,
): Promise<string | undefined> {
  const body = encodeProposal(record);
  try {
    const written =
      etag === undefined
        ? await store.createIfAbsent(proposalKey(record.id), body)
        : await store.replaceIfMatch(proposalKey(record.id), body, etag);
    return written.etag;
  } catch (err) {
    if (isStoreError(err) && err.kind === 'precondition-failed') return undefined;
    throw err;
  }
}

/** One listed proposal: its record, or why it cannot be read. */
export type ListedProposal =
  | { id: string; record: ProposalRecord }
  | { id: string; malformed: string };

/** Every stored proposal (one list, one GET each), oldest id first. */
export async function listProposals(store: ObjectStore): Promise<ListedProposal[]> {
  const keys = (await store.list(PROPOSALS_NAMESPACE)).map((entry) => entry.key);
  const listed: ListedProposal[] = [];
  for (const key of keys) {
    const id = key.slice(PROPOSALS_NAMESPACE.length);
    try {
      const found = await readProposal(store, id);
      if (found !== undefined) listed.push({ id, record: found.record });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      listed.push({ id, malformed: err.message });
    }
  }
  return listed;
}

/** How long a decided proposal stays readable before the proposals' cleanup deletes it. */
export const DECIDED_RETENTION_MS = 30 * 24 * 60 * 60_000;

/**
 * The proposals' own cleanup (docs/review.md): deletes every approved or rejected proposal last
 * changed more than {@link DECIDED_RETENTION_MS} before `now`; open and malformed ones stay.
 * Returns how many it deleted.
 */
export async function pruneDecided(store: ObjectStore, now = Date.now()): Promise<number> {
  const expired = (await listProposals(store)).filter(
    (listed) =>
      'record' in listed &&
      listed.record.state !== 'open' &&
      now - Date.parse(listed.record.updatedAt) > DECIDED_RETENTION_MS,
  );
  if (expired.length > 0) await store.deleteMany(expired.map((listed) => proposalKey(listed.id)));
  return expired.length;
}
