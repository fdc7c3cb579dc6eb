/**
 * What the view knows of review (docs/review.md): the stored proposals and the notebook's
 * review setting, read from the store through the engine at most once a second for all pages
 * together (the nav's pending count, the Proposals page, the live poll's version), and who of
 * the logged-in sessions may decide or revert under it.
 */
import { createHash } from 'node:crypto';
import {
  type ListedProposal,
  listProposals,
  type ObjectStore,
  parseApprovalTrailer,
  type ReviewShown,
  reviewApplies,
  showReview,
} from '@slivingdoc/engine';
import type { TokenGrant } from '@slivingdoc/http';
import type { ConfirmedApproval } from './pages/proposals';

/** One reading of the proposals and the setting. */
export interface ReviewBoard {
  proposals: ListedProposal[];
  /** The setting, `invalid` when it cannot be parsed, `unreadable` when the store failed. */
  setting: ReviewShown | { state: 'unreadable' };
  /** Open proposals. */
  pending: number;
  /** Changes whenever a proposal is added, revised, marked or decided (the live poll's tag). */
  version: string;
}

/** How long one reading serves every page and poll. */
const BOARD_TTL_MS = 1000;

/** The board of one view, cached for {@link BOARD_TTL_MS}. */
export class ReviewWatch {
  #cached: { at: number; board: Promise<ReviewBoard> } | undefined;

  constructor(private readonly store: ObjectStore) {}

  /** The current board (a store failure rejects, and the next call reads again). */
  board(): Promise<ReviewBoard> {
    const now = Date.now();
    if (this.#cached === undefined || now - this.#cached.at > BOARD_TTL_MS) {
      const board = this.#read();
      board.catch(() => {
        this.#cached = undefined;
      });
      this.#cached = { at: now, board };
    }
    return this.#cached.board;
  }

  /** Forgets the cached board (after a decision, so the next page shows it). */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #read(): Promise<ReviewBoard> {
    const [proposals, setting] = await Promise.all([
      listProposals(this.store),
      showReview(this.store).catch((): { state: 'unreadable' } => ({ state: 'unreadable' })),
    ]);
    const stamp = proposals.map((listed) =>
      'record' in listed
        ? `${listed.id}:${listed.record.state}:${listed.record.revision}:${listed.record.approving?.at ?? ''}`
        : `${listed.id}:malformed`,
    );
    const version = createHash('sha256')
      .update(JSON.stringify([stamp, setting]))
      .digest('base64url')
      .slice(0, 12);
    const pending = proposals.filter((p) => 'record' in p && p.record.state === 'open').length;
    return { proposals, setting, pending, version };
  }
}

/** The record of proposal `id` on the board, if it is stored and readable. */
export function recordOf(board: ReviewBoard, id: string): ListedProposal | undefined {
  return board.proposals.find((listed) => listed.id === id);
}

/**
 * The approval a publication's message claims, confirmed by the proposal's record: approved,
 * by that approver, at that revision. Unconfirmed claims (a forged trailer, or a record the
 * proposals' cleanup already deleted) are not shown as approvals.
 */
export function confirmedApproval(
  board: ReviewBoard,
  message: string,
): ConfirmedApproval | undefined {
  const claim = parseApprovalTrailer(message);
  if (claim === undefined) return undefined;
  const listed = recordOf(board, claim.id);
  const record = listed !== undefined && 'record' in listed ? listed.record : undefined;
  if (
    record?.state !== 'approved' ||
    record.decision?.by !== claim.approver ||
    record.decision.revision !== claim.revision
  )
    return undefined;
  return { by: claim.approver, id: claim.id, revision: claim.revision };
}

/**
 * A person's session: the token `slivingdoc view` printed, or a token made with
 * `token add NAME --reviewer`. Only such a session approves or rejects.
 */
export function isPerson(grant: TokenGrant): boolean {
  return grant.reviewer === true && !grant.readOnly;
}

/**
 * Whether review may queue this token's commits (fail closed: an unreadable or unparsable
 * setting counts as review). A token's actor is authenticated, so the setting's actor rules
 * bind it, and `--review queue` tokens always are.
 */
export function underReview(board: ReviewBoard, grant: TokenGrant): boolean {
  if (board.setting.state === 'invalid' || board.setting.state === 'unreadable') return true;
  return reviewApplies(board.setting.setting, {
    actor: grant.name,
    authenticated: true,
    floor: grant.review,
  });
}
