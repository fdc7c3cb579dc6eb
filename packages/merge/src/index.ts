/**
 * @slivingdoc/merge: git objects (SHA-1) and packs (our own codecs; isomorphic-git reads
 * objects and indexes delta packs), three-way tree and text merge, marker blocks and diffstat.
 * Knows nothing of S3, MCP or the visible directory.
 */

export {
  ClosureError,
  CommitFormatError,
  type InvalidBlob,
  ObjectMissingError,
  PackError,
  type PackErrorKind,
  TreeError,
  type TreeErrorKind,
} from './errors';
export type { CommitData } from './model/commit-codec';
export { DEFAULT_AUTHOR, IDENTITY, isValidAuthorName } from './model/commit-codec';
export { blobOid, type Oid } from './model/object-format';
export { diffstat, type FileStat, lineDiffStat } from './operations/diffstat';
export { findMarkerBlocks } from './operations/markers';
export {
  createCheckpointPack,
  createIncrementPack,
  importPack,
  verifyClosure,
} from './operations/packs';
export {
  type LineRange,
  type MergeAdditions,
  mergeText,
  type TextMergeOptions,
  type TextMergeResult,
} from './operations/text-merge';
export {
  type Merge3Input,
  type MergeConflict,
  type MergeConflictReason,
  merge3,
  sameEntries,
} from './operations/tree-merge';
export type {
  ConsolidationOptions,
  ConsolidationReport,
  ConsolidationRoots,
  ConsolidationStep,
  ObjectDbSize,
} from './storage/consolidate';
export { IdleRelease } from './storage/idle-release';
export { CACHE_IDLE_RELEASE_MS } from './storage/object-cache';
export {
  type ObjectDb,
  openObjectDb,
  type StageOption,
  type TreeEntries,
} from './storage/object-db';
export type { BaseTree } from './storage/tree-build';
