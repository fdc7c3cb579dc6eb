export {
  type BuildSuccessInit,
  buildError,
  buildSuccess,
  normaliseRanges,
  reportedGeneration,
} from './build';
export {
  ACTIONS,
  type Action,
  CATALOGUE,
  type CodeSpec,
  catalogueEntries,
  ENGINE_DETAILS,
  type EngineDetail,
  ERROR_CODES,
  type ErrorCode,
  FILE_REASONS,
  type FileReason,
  RECOVERY_STAGES,
  type Reason,
  type ReasonOf,
  type ReasonSpec,
  type RecoveryStage,
  reasonSpec,
} from './catalogue';
export {
  diffstatTrailer,
  renderCliError,
  renderCliSuccess,
  renderDiffstat,
  useColor,
} from './cli';
export { type CommitRefusal, withCommitRefusalSentence } from './commit-refusal-text';
export { isDiagnosticId, newDiagnosticId } from './diagnostic-id';
export {
  type AnyDomainError,
  DomainError,
  type DomainErrorInit,
  isDomainError,
} from './domain-error';
export { engineDetailFor, internalError } from './engine-detail';
export { renderErrorsMarkdown } from './errors-doc';
export { compareUtf8, sortByUtf8 } from './order';
export {
  candidSetLines,
  pathSetSentences,
  successSuffix,
  withPathSetSentences,
} from './path-set-text';
export type {
  ErrorResult,
  FileIssue,
  FileStat,
  LineRange,
  PathSets,
  ProposalOutcome,
  RecoveryReport,
  SuccessResult,
} from './results';
export {
  createScrubber,
  PRIVATE_ROOT,
  REDACTED,
  type Scrubber,
  type ScrubberInit,
  SECRET_ENV_NAME,
} from './scrubber';
export { candidText, resultText, reviewLines, successText } from './text';
export { hasInvisible, type VisibleSegment, visibleSegments, visibleText } from './visible';
