/**
 * Manifest queries the store package does not offer (its `manifest/build` owns the
 * transitions): whether a position or checkpoint is held, which keys are referenced, whether
 * a checkpoint's prefix is still intact.
 */
import type { CheckpointDescriptor, IncrementDescriptor, Manifest } from '@slivingdoc/store';

interface ChainView {
  checkpoint: CheckpointDescriptor;
  increments: IncrementDescriptor[];
}

function chains(manifest: Manifest): ChainView[] {
  return [manifest, ...manifest.retained];
}

/** True when a checkpoint with this id is active or retained. */
export function holdsCheckpoint(manifest: Manifest, checkpointId: string): boolean {
  return chains(manifest).some((chain) => chain.checkpoint.id === checkpointId);
}

/**
 * True when another publication provably holds chain position `position`: an increment at that
 * position, or a checkpoint through exactly that position, with a different publication id.
 * A position only covered inside a compacted range proves nothing (its publication is unknown).
 */
export function positionHeldByOther(
  manifest: Manifest,
  position: bigint,
  publication: string,
): boolean {
  return chains(manifest).some(
    (chain) =>
      (chain.checkpoint.throughGeneration === position &&
        chain.checkpoint.publication !== publication) ||
      chain.increments.some(
        (increment) => increment.generation === position && increment.publication !== publication,
      ),
  );
}

/** Every pack key the manifest references (active and retained). */
export function referencedKeys(manifest: Manifest): Set<string> {
  const keys = new Set<string>();
  for (const chain of chains(manifest)) {
    keys.add(chain.checkpoint.key);
    for (const increment of chain.increments) keys.add(increment.key);
  }
  return keys;
}

/** True when `later` still starts with `earlier`'s checkpoint and first `length` increments. */
export function prefixIntact(earlier: Manifest, later: Manifest, length: number): boolean {
  if (later.checkpoint.id !== earlier.checkpoint.id || later.increments.length < length)
    return false;
  for (let i = 0; i < length; i += 1) {
    if (later.increments[i]?.key !== earlier.increments[i]?.key) return false;
  }
  return true;
}
