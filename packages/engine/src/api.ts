/**
 * The public API of a notebook service: the requests a participant makes, the results it gets,
 * and the service itself (docs/engine.md, "Two halves"; contract §13).
 */
import type { CommitRefusal, PathSets, SuccessResult } from '@slivingdoc/envelope';
import type { PublicationRecord } from './notebook/history';
import type { BlameLine, PublicationDetail } from './notebook/inspect';
import type { NotebookStatus } from './participant/status';
import type { ProgressListener } from './progress';
import type { ApproveResult } from './review/decide';
import type { ReviewMode } from './review/setting';

/** A pull request: the path is the caller's raw string (decoded, not yet resolved). */
export interface PullRequest {
  path?: string;
  signal?: AbortSignal;
  /** Told how many files were scanned and written so far (for a progress display). */
  onProgress?: ProgressListener;
}

/** A commit request: the message is kept byte for byte. */
export interface CommitRequest {
  message: string;
  path?: string;
  signal?: AbortSignal;
  /**
   * The participant publishing (contract §9): the author name of the commit, 1–64 bytes of UTF-8
   * without control characters, `<` or `>` (else INVALID_REQUEST · INVALID_ARGUMENTS).
   * Absent: `slivingdoc`.
   */
  actor?: string;
  /** Told how many files were scanned and written so far (for a progress display). */
  onProgress?: ProgressListener;
  /**
   * True for an agent's commit through the MCP tools: the notebook's review setting applies
   * (docs/review.md). Absent: a person's commit (the CLI), never queued.
   */
  viaTools?: boolean;
}

/** `proposals approve` (docs/review.md): published through this clean, pulled directory. */
export interface ApproveRequest {
  id: string;
  path?: string;
  /** The approver (the CLI's actor, the view's person). */
  actor: string;
  /** The revision the reviewer saw; absent: the current one. */
  revision?: number;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
}

/** A status request (read-only). */
export interface StatusRequest {
  path?: string;
  signal?: AbortSignal;
}

/** A log request: the latest `limit` publications of the retained history. */
export interface LogRequest {
  path?: string;
  /** How many publications, newest first (≥ 1). */
  limit: number;
  /** Per-file insertions and deletions of each publication. */
  stat?: boolean;
  signal?: AbortSignal;
}

/** The retained history as `log` returns it. */
export interface HistoryResult {
  /** The directory (realpath). */
  path: string;
  /** The manifest generation of `current` (0: the store holds no notebook yet). */
  generation: number;
  /** Newest first. */
  publications: PublicationRecord[];
}

/** A history request: one page of the retained history, filtered by actor and path. */
export interface HistoryRequest {
  path?: string;
  /** Publications per page, newest first (≥ 1). */
  limit: number;
  /** Matching publications to skip (≥ 0). */
  offset?: number;
  /** Only publications whose actor is exactly this. */
  actor?: string;
  /** Only publications that changed this notebook file, or a file below this folder. */
  file?: string;
  signal?: AbortSignal;
}

/** One page of the history, each publication with its diffstat (`files`). */
export interface HistoryPage extends HistoryResult {
  /** Whether older matching publications follow. */
  more: boolean;
  /**
   * The generations through which each retained checkpoint compacted the history, newest
   * first: before the oldest of them, nothing is retained.
   */
  checkpoints: number[];
}

/** A read of one retained state: `generation` absent means the accepted one. */
export interface StateRequest {
  path?: string;
  generation?: number;
  signal?: AbortSignal;
}

/** A read of one notebook file (path relative to the notebook, `/`-separated). */
export interface FileRequest extends StateRequest {
  file: string;
}

/** The notebook's files at one generation (`generation` 0: the store holds no notebook). */
export interface NotebookFiles {
  generation: number;
  /** Notebook paths in UTF-8 byte order. */
  files: string[];
}

/** One file's bytes at one generation. */
export interface NotebookFile {
  generation: number;
  file: string;
  content: Uint8Array;
}

/** Line attribution of one text file at one generation. */
export interface BlameResult {
  path: string;
  /** The generation blamed (the accepted one unless asked). */
  generation: number;
  file: string;
  lines: BlameLine[];
}

/** One publication with its members' diffs. */
export interface PublicationResult extends PublicationDetail {
  /** The accepted generation when it was read. */
  storeGeneration: number;
}

/** A revert request: undo publication `generation` (a chain position `log` lists). */
export interface RevertRequest {
  generation: number;
  path?: string;
  /** Default: `Revert generation N: <first line of N's message>`. */
  message?: string;
  /** As for a commit. */
  actor?: string;
  /**
   * What a conflicting revert does: `markers` (the CLI) leaves marker blocks in the copy;
   * `refuse` (the view) changes nothing and only reports the conflicting files and ranges.
   */
  onConflict?: 'markers' | 'refuse';
  signal?: AbortSignal;
  onProgress?: ProgressListener;
}

/**
 * The notebook service: pull and commit for any directory at or below the workspace root.
 * Both resolve to the page's success object or reject with a `DomainError`
 * (`@slivingdoc/envelope`); a cancelled call rejects with its signal's reason.
 */
export interface NotebookService {
  /** The normalised path sets this service enforces. */
  readonly sets: PathSets;
  /** The service's own notebook directory (realpath). */
  readonly notebookDir: string;
  /**
   * Why every commit and revert of this participant is refused, if one is: `token` (a
   * read-only session) or `store` (the store's credentials can only read).
   */
  readonly commitsRefused: CommitRefusal | undefined;
  pull(request: PullRequest): Promise<SuccessResult>;
  commit(request: CommitRequest): Promise<SuccessResult>;
  /**
   * The directory's state, its unpublished changes and how far it is behind the store.
   * Read-only: reads `current` only, never rewrites L or records a baseline.
   */
  status(request: StatusRequest): Promise<NotebookStatus>;
  /**
   * The latest publications of the retained history, newest first (INVALID_REQUEST ·
   * NOT_PULLED before a pull). Fetches only the packs P lacks; never rewrites L or the baseline.
   */
  log(request: LogRequest): Promise<HistoryResult>;
  /**
   * Publishes the inverse of one retained publication, merged onto R, through the directory's
   * clean copy: OK as a commit, CONTENT_CONFLICT with markers in the copy, INVALID_REQUEST ·
   * UNPUBLISHED_EDITS or GENERATION_NOT_RETAINED.
   */
  revert(request: RevertRequest): Promise<SuccessResult>;
  /**
   * Approves a proposal (docs/review.md): merged onto R through the directory's clean copy and
   * published once, authored by the proposing agent; the approver is recorded in the proposal.
   */
  approve(request: ApproveRequest): Promise<ApproveResult>;
  /** Whether the notebook's review setting may queue this participant's tool commits now. */
  reviewApplies(request?: { actor?: string | undefined; signal?: AbortSignal }): Promise<boolean>;
  /**
   * The generation of the latest publication (0: none yet), as `log` numbers them; reads only
   * `current`. A checkpoint, which publishes nothing, does not change it.
   */
  acceptedGeneration(signal?: AbortSignal): Promise<number>;
  /** One page of the retained history, filtered (reads as `log` does). */
  history(request: HistoryRequest): Promise<HistoryPage>;
  /** One retained publication with each member's per-file unified diff. */
  publication(request: StateRequest & { generation: number }): Promise<PublicationResult>;
  /** The notebook's files at a retained generation (the accepted one by default). */
  files(request: StateRequest): Promise<NotebookFiles>;
  /** One file's bytes at a retained generation (INVALID_REQUEST · FILE_NOT_FOUND if absent). */
  readFile(request: FileRequest): Promise<NotebookFile>;
  /** Which publication last changed each line of a text file, over the retained history. */
  blame(request: FileRequest): Promise<BlameResult>;
  /**
   * The directories below the workspace root that this service's private root manages, and
   * those of them holding unpublished edits (changes not yet accepted, files that are not
   * notebook state, or a pending repair; a directory that cannot be checked counts as holding
   * some). Lets an embedder decide whether a directory may be deleted. `under`: only the
   * directories at or below it (default: the workspace root).
   */
  localChanges(under?: string): Promise<{ managed: string[]; unpublished: string[] }>;
  /** Waits for background checkpoints (bounded) and releases every lock. */
  close(): Promise<void>;
  /**
   * A participant of this same notebook service (an HTTP session): its own default directory
   * and path sets, sharing every directory's handles, locks and the object caches with the
   * service and its other sessions. A `commitRefused` session answers every commit and revert
   * with READ_ONLY_SESSION · TOKEN_READ_ONLY. Its `close` and `session` are the service's.
   */
  session(options: SessionOptions): Promise<NotebookService>;
  /**
   * Drops `dir` (a realpath) from this service: closes its handles and deletes its private
   * state, so the directory itself can be removed. Only for a directory that holds nothing
   * unpublished (see {@link localChanges}); waits for its lock.
   */
  forget(dir: string): Promise<void>;
}

/** What makes a session differ from the service it belongs to. */
export interface SessionOptions {
  /** The session's default directory (at or below the workspace root; created on first pull). */
  notebookDir: string;
  /** Replace the service's writable and read-only path sets when either is given. */
  writable?: string[];
  readOnly?: string[];
  /** True: every commit and revert is refused (a read-only token). */
  commitRefused?: boolean;
  /**
   * The session's actor is authenticated (a hub token), so the review setting's actor rules
   * bind it; `floor: 'queue'` queues its every tool commit (`token add --review queue`).
   */
  review?: { authenticated: boolean; floor?: ReviewMode };
  /**
   * True: every call may address only `notebookDir` and below (an HTTP token's own directory);
   * any other path is INVALID_REQUEST · PATH_OUTSIDE_TOKEN_DIR before anything is read or made.
   */
  confined?: boolean;
}
