/**
 * `@slivingdoc/engine`: pull, commit, optimistic publication, recovery, checkpoints and
 * cleanup (contract §8–§11), as a library any Node tool can import. No MCP or CLI types here.
 *
 * The one package an embedder installs: it re-exports the stores, the results and the
 * errors a caller needs from the lower layers, so no other `@slivingdoc/*` import is needed.
 */

// Results and errors (`@slivingdoc/envelope`).
export {
  type Action,
  type AnyDomainError,
  DomainError,
  type EngineDetail,
  type ErrorCode,
  type FileIssue,
  type FileReason,
  type FileStat,
  isDomainError,
  type LineRange,
  type PathSets,
  type Reason,
  type ReasonOf,
  type ReasonSpec,
  type RecoveryReport,
  type RecoveryStage,
  reasonSpec,
  type SuccessResult,
} from '@slivingdoc/envelope';
// Path sets (`@slivingdoc/policy`): what `createNotebookService` throws for an invalid set.
export { PathSetError } from '@slivingdoc/policy';
// Stores (`@slivingdoc/store`). The S3 store loads the AWS SDK on its first request only.
export {
  createEmbeddedStore,
  createMemoryStore,
  createS3Store,
  type EtagForm,
  type MemoryStore,
  type ObjectStore,
  type S3StoreOptions,
} from '@slivingdoc/store';
/** The actor rules of contract §9 (an actor is a commit's author name) and its default. */
export { DEFAULT_ACTOR, isValidActor } from './actor';
export type {
  ApproveRequest,
  BlameResult,
  CommitRequest,
  FileRequest,
  HistoryPage,
  HistoryRequest,
  HistoryResult,
  LogRequest,
  NotebookFile,
  NotebookFiles,
  NotebookService,
  PublicationResult,
  PullRequest,
  RevertRequest,
  SessionOptions,
  StateRequest,
  StatusRequest,
} from './api';
export type { EngineConfig, EngineLogger } from './config';
export { EngineConfigError } from './config-error';
export {
  FAILPOINT,
  FAILPOINT_RESUME_SIGNAL,
  FAILPOINTS_ENV,
  type FailpointAction,
  FailpointError,
  type FailpointName,
  FailpointRegistry,
  type Failpoints,
  failpointsFromEnv,
  NO_FAILPOINTS,
} from './failpoints';
export type { BackoffClock } from './notebook/backoff';
export { backoffCeiling, SYSTEM_CLOCK } from './notebook/backoff';
export type { PublicationRecord } from './notebook/history';
export type {
  BlameLine,
  DiffHunk,
  DiffLine,
  FileDiff,
  LineOrigin,
  PublicationDetail,
  PublicationMember,
} from './notebook/inspect';
export { groupEndpoint } from './notebook/publication/queue';
export type { NotebookState, NotebookStatus, PrivateStateSize } from './participant/status';
export type { Progress, ProgressListener } from './progress';
export {
  APPROVING_HOLD_MS,
  type ApprovalTrailer,
  type ApproveResult,
  parseApprovalTrailer,
  rejectProposal,
} from './review/decide';
export { proposalDiffs } from './review/diff';
export { type ApprovalPreview, type HeadFiles, previewApproval } from './review/preview';
export {
  type DirectoryProposal,
  MAX_OPEN_PER_ACTOR,
  type ReviewCaller,
  reviewApplies,
} from './review/propose';
export type { ProposalFile, ProposalRecord, ProposalState } from './review/record';
export {
  DEFAULT_REVIEW,
  type ReviewMode,
  type ReviewRule,
  type ReviewScope,
  type ReviewSetting,
} from './review/setting';
export {
  DECIDED_RETENTION_MS,
  type ListedProposal,
  listProposals,
  pruneDecided,
  type ReviewShown,
  requireProposal,
  setReview,
  showReview,
} from './review/store-io';
export { createNotebookService } from './service';
