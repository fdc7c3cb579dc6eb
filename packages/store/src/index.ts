/**
 * @slivingdoc/store — bytes, keys, ETags and the manifest (contract §7). Knows nothing of git,
 * merging or MCP.
 */
export {
  type DriverContext,
  parseBooleanSetting,
  type SettingContext,
  type SettingValues,
  type StoreConfigBase,
  type StoreDriver,
  type StoreLocation,
  type StoreSetting,
  StoreSettingError,
  type StoreSettings,
} from './driver';
export { isStoreError, StoreError, type StoreErrorKind } from './errors';
export {
  assertPrefix,
  CURRENT_KEY,
  checkpointKey,
  fullKey,
  incrementKey,
  isConditionalKey,
  isDeletableKey,
  isPackKey,
  isProposalId,
  type KeyKind,
  keyKind,
  type ListNamespace,
  PACKS_NAMESPACE,
  PROPOSALS_NAMESPACE,
  parsePackKey,
  prefixProblem,
  probeKey,
  proposalKey,
  REVIEW_KEY,
} from './keys';
export {
  appendIncrement,
  compactIncrements,
  firstManifest,
  hasPublication,
  lastChainPosition,
  nextIncrementKey,
  type UploadedPack,
} from './manifest/build';
export { decodeManifest } from './manifest/decode';
export { encodeManifest } from './manifest/encode';
export {
  type CheckpointDescriptor,
  type IncrementDescriptor,
  type Manifest,
  ManifestError,
  type ManifestErrorReason,
  type RetainedChain,
} from './manifest/types';
export { validateManifest } from './manifest/validate';
export {
  batches,
  type ConditionForms,
  DELETE_BATCH_SIZE,
  type ListedObject,
  type ObjectStore,
} from './object-store';
export { type ProbeOptions, type ProbeResult, runProbe } from './probe';
export { createEmbeddedStore } from './stores/embedded';
export {
  type EmbeddedStoreConfig,
  type EmbeddedStoreSettings,
  embeddedStoreDriver,
} from './stores/embedded-driver';
export {
  createMemoryStore,
  type Fault,
  type FaultAction,
  type LoggedCall,
  type MemoryStore,
  type StoreOperation,
} from './stores/memory';
export {
  classifyS3Error,
  createS3Store,
  type EtagForm,
  MULTIPART_THRESHOLD,
  S3_REQUEST_TIMEOUT_MS,
  type S3Store,
  type S3StoreOptions,
} from './stores/s3';
export { type S3StoreConfig, type S3StoreSettings, s3StoreDriver } from './stores/s3-driver';
export { isUuidV7, newUuidV7 } from './uuid';
