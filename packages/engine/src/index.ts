/**
 * `@slivingdoc/engine`: pull, commit, optimistic publication, recovery, checkpoints and
 * cleanup (SPEC §8–§11), as a library any Node tool can import. No MCP or CLI types here.
 */

/** The actor rules of SPEC §9 (an actor is a commit's author name) and its default. */
export {
  DEFAULT_AUTHOR as DEFAULT_ACTOR,
  isValidAuthorName as isValidActor,
} from '@slivingdoc/merge';
export type { BackoffClock } from './backoff';
export { backoffCeiling, SYSTEM_CLOCK } from './backoff';
export type { EngineConfig, EngineLogger } from './config';
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
export type { PublicationRecord } from './history';
export type { Progress, ProgressListener } from './progress';
export {
  type CommitRequest,
  createNotebookService,
  type HistoryResult,
  type LogRequest,
  type NotebookService,
  type PullRequest,
  type RevertRequest,
  type StatusRequest,
} from './service';
export type { NotebookState, NotebookStatus } from './status';
