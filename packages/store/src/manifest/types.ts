/** A closed full-state pack and the chain position it covers. */
export interface CheckpointDescriptor {
  /** UUIDv7 of the checkpoint itself. */
  id: string;
  /** Publication id of the checkpoint's head commit. */
  publication: string;
  /** Last chain position the pack covers (1 for the first publication). */
  throughGeneration: bigint;
  /** Head commit id (40 lowercase hex). */
  head: string;
  /** `packs/checkpoints/<throughGeneration>-<id>.pack`. */
  key: string;
  /** SHA-256 of the pack bytes (64 lowercase hex). */
  sha256: string;
  /** Pack size in bytes (> 0). */
  size: bigint;
}

/** One publication's pack, at a chain position. */
export interface IncrementDescriptor {
  /** Chain position: consecutive from the checkpoint's `throughGeneration` + 1. */
  generation: bigint;
  /** UUIDv7 of the publication. */
  publication: string;
  /** Head this publication was built on. */
  parent: string;
  /** Head commit id after this publication. */
  head: string;
  /** `packs/increments/<generation>-<publication>.pack`. */
  key: string;
  sha256: string;
  size: bigint;
}

/** A chain replaced by a checkpoint, kept so slow readers and cleanup can still find it. */
export interface RetainedChain {
  /** Manifest generation that compacted this chain. */
  retiredAtGeneration: bigint;
  /** Head of the chain's last element. */
  head: string;
  checkpoint: CheckpointDescriptor;
  increments: IncrementDescriptor[];
}

/** Manifest version 1 (contract §7), the content of `current`. */
export interface Manifest {
  version: 1;
  /** Counts every successful replacement of `current` (commits and checkpoints). */
  generation: bigint;
  /** Head of the accepted notebook: the last increment's head, or the checkpoint's. */
  head: string;
  checkpoint: CheckpointDescriptor;
  increments: IncrementDescriptor[];
  /** Newest first. */
  retained: RetainedChain[];
}

/** Why a manifest was refused: catalogue reasons of STORAGE_INTEGRITY. */
export type ManifestErrorReason = 'INVALID_MANIFEST' | 'UNSUPPORTED_MANIFEST';

/**
 * Thrown by decoding and validation. `message` says which rule failed and where (a JSON path
 * such as `increments[2].parent`), never the field values.
 */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  readonly reason: ManifestErrorReason;
  constructor(reason: ManifestErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}
