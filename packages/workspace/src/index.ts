export {
  ConcurrentEditError,
  InvalidChangeError,
  LockTimeoutError,
  PrivateStateUnavailableError,
  type ScanProblem,
  type ScanReason,
  StateError,
  type StateErrorKind,
} from './errors';
export {
  acquireLock,
  type LockOptions,
  lockAddress,
  lockDirectory,
  type Release,
} from './lock';
export { ChangeMonitor, type ChangeMonitorOptions } from './monitor';
export {
  hasStateRecord,
  openPrivateState,
  type PrivateState,
  type PrivateStateLocation,
  privateStateKey,
  readPrivateRecords,
} from './private-state';
export { openRegistry, type Registry } from './registry';
export {
  MAX_ABSOLUTE_PATH_BYTES,
  MAX_FILE_BYTES,
  type ScannedFile,
  type ScanResult,
  scanNotebook,
} from './scan';
export type { FileStamp } from './stamp';
export { emptyStatCache, loadStatCache, type StatCache } from './stat-cache';
export { decodeState, encodeState, type StateV1 } from './state-codec';
export {
  decodeTarget,
  encodeTarget,
  type RewriteTarget,
  type TargetBaseline,
  type TargetRewrite,
} from './target-codec';
export { type FileChange, type WrittenFile, writeChanges } from './write';
