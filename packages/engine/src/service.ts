import type { PathSets, SuccessResult } from '@slivingdoc/envelope';

/** A pull request: the path is the caller's raw string (decoded, not yet resolved). */
export interface PullRequest {
  path?: string;
  signal?: AbortSignal;
}

/** A commit request: the message is kept byte for byte. */
export interface CommitRequest {
  message: string;
  path?: string;
  signal?: AbortSignal;
}

/**
 * The notebook service: pull and commit for any directory at or below the workspace root.
 * Both resolve to the page's success object or reject with a `DomainError`
 * (`@slivingdoc/envelope`); anything else is an unclassified internal failure.
 */
export interface NotebookService {
  /** The normalised path sets this service enforces. */
  readonly sets: PathSets;
  /** The service's own notebook directory (realpath). */
  readonly notebookDir: string;
  pull(request: PullRequest): Promise<SuccessResult>;
  commit(request: CommitRequest): Promise<SuccessResult>;
  /** Waits for background checkpoints (bounded) and releases every lock. */
  close(): Promise<void>;
}
