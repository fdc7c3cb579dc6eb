/**
 * @slivingdoc/merge: git objects (SHA-1) and packs through isomorphic-git, three-way tree and
 * text merge, marker blocks and diffstat. Knows nothing of S3, MCP or the visible directory.
 */
export type { CommitData } from './commitCodec';
export { DEFAULT_AUTHOR, IDENTITY, isValidAuthorName } from './commitCodec';
export { diffstat, type FileStat, lineDiffStat } from './diffstat';
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
export { findMarkerBlocks } from './markers';
export {
  type ObjectDb,
  openObjectDb,
  type StageOption,
  type TreeEntries,
} from './objectDb';
export { blobOid, type Oid } from './objectFormat';
export { createCheckpointPack, createIncrementPack, importPack, verifyClosure } from './packs';
export { type LineRange, mergeText, type TextMergeResult } from './textMerge';
export type { BaseTree } from './treeBuild';
export {
  type Merge3Input,
  type MergeConflict,
  type MergeConflictReason,
  merge3,
  sameEntries,
} from './treeMerge';
