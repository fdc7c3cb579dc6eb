/**
 * `@slivingdoc/engine`: pull, commit, optimistic publication, recovery, checkpoints and
 * cleanup (SPEC §8–§11), as a library any Node tool can import. No MCP or CLI types here.
 */
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
export { groupEndpoint } from './gate';
export {
  type CommitRequest,
  createNotebookService,
  type NotebookService,
  type PullRequest,
} from './service';
