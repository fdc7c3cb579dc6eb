import type {
  Action,
  EngineDetail,
  ErrorCode,
  FileReason,
  Reason,
  RecoveryStage,
} from './catalogue';

/** One-based inclusive line range of a marker block in a materialised file. */
export interface LineRange {
  start: number;
  end: number;
}

/** Per-file diffstat entry of a success result. */
export interface FileStat {
  path: string;
  insertions: number;
  deletions: number;
}

/** The configured path sets, normalised and sorted (contract §5). Empty when not configured. */
export interface PathSets {
  readOnly: string[];
  writable: string[];
}

/** The structured object of a successful call, in the page's field order. */
export interface SuccessResult {
  code: 'OK';
  path: string;
  /**
   * The accepted remote generation: a JSON number while it is exact in IEEE-754 doubles
   * (≤ 2^53 − 1), else its exact decimal digits as a string (generations are unsigned 64-bit;
   * docs/interfaces.md).
   */
  generation: number | string;
  filesChanged: number;
  insertions: number;
  deletions: number;
  files: FileStat[];
  readOnly: string[];
  writable: string[];
  /**
   * Queue mode only (docs/review.md): the change was stored as a proposal and nothing was
   * published. Absent whenever review does not apply, so today's results are unchanged.
   */
  status?: 'pending';
  /** With `status`: the directory's open proposal. */
  proposalId?: string;
  /** With `status`: the proposal's revision this call stored. */
  revision?: number;
  /** Queue mode only: a person decided the directory's proposal since its last call. */
  proposalOutcome?: ProposalOutcome;
}

/** What a person decided about a directory's proposal (docs/review.md). */
export interface ProposalOutcome {
  proposalId: string;
  revision: number;
  status: 'approved' | 'rejected';
  /** Who decided. */
  by: string;
  /** Reject's reason, when given. */
  reason?: string;
  /** Approve: the generation that published the change. */
  generation?: string;
}

/** One affected file of an error: its own reason and its marker ranges (maybe empty). */
export interface FileIssue {
  path: string;
  reason: FileReason;
  ranges: LineRange[];
}

/** What a RECOVERY_FAILURE's repair found and did (contract §10). */
export interface RecoveryReport {
  stage: RecoveryStage;
  remoteAccepted: 'yes' | 'no' | 'unknown';
  resynchronized: boolean;
}

/** The structured object of a domain error, in the page's field order. */
export interface ErrorResult {
  code: ErrorCode;
  reason: Reason;
  action: Action;
  diagnosticId: string;
  retryable: boolean;
  message: string;
  detail?: EngineDetail;
  files: FileIssue[];
  recovery?: RecoveryReport;
  readOnly: string[];
  writable: string[];
}
