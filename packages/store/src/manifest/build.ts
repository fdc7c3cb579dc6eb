import { checkpointKey, incrementKey } from '../keys';
import { frozen, frozenChain } from './memo';
import type { IncrementDescriptor, Manifest } from './types';
import { validateManifest } from './validate';

/** The pack a publication or checkpoint uploaded: what its descriptor records. */
export interface UploadedPack {
  /** Head commit id the pack carries (40 hex). */
  head: string;
  /** SHA-256 of the pack bytes (64 hex). */
  sha256: string;
  /** Pack size in bytes. */
  size: bigint;
}

/** The chain position of the active chain's last element (increment or checkpoint). */
export function lastChainPosition(m: Manifest): bigint {
  return m.increments.at(-1)?.generation ?? m.checkpoint.throughGeneration;
}

/** True when `publication` appears in any active or retained descriptor (contract §9, ambiguous CAS). */
export function hasPublication(m: Manifest, publication: string): boolean {
  const chains = [m, ...m.retained];
  return chains.some(
    (c) =>
      c.checkpoint.publication === publication ||
      c.increments.some((i) => i.publication === publication),
  );
}

/**
 * The first manifest (generation 1): a closed checkpoint through chain position 1, created with
 * create-if-absent by the first publication, whose own id is the checkpoint's publication.
 */
export function firstManifest(
  init: UploadedPack & { checkpointId: string; publication: string },
): Manifest {
  const m: Manifest = {
    version: 1,
    generation: 1n,
    head: init.head,
    checkpoint: frozen({
      id: init.checkpointId,
      publication: init.publication,
      throughGeneration: 1n,
      head: init.head,
      key: checkpointKey(1n, init.checkpointId),
      sha256: init.sha256,
      size: init.size,
    }),
    increments: [],
    retained: [],
  };
  validateManifest(m);
  return m;
}

/**
 * The manifest after one more publication on top of `m`: the increment takes the next chain
 * position with `m.head` as parent, and the manifest generation grows by one.
 */
export function appendIncrement(
  m: Manifest,
  init: UploadedPack & { publication: string },
): Manifest {
  const generation = lastChainPosition(m) + 1n;
  const increment: IncrementDescriptor = frozen({
    generation,
    publication: init.publication,
    parent: m.head,
    head: init.head,
    key: incrementKey(generation, init.publication),
    sha256: init.sha256,
    size: init.size,
  });
  const next: Manifest = {
    ...m,
    generation: m.generation + 1n,
    head: init.head,
    increments: [...m.increments, increment],
  };
  validateManifest(next);
  return next;
}

/** The increment key a publication would take as the next chain position after `m`. */
export function nextIncrementKey(m: Manifest, publication: string): string {
  return incrementKey(lastChainPosition(m) + 1n, publication);
}

/**
 * The manifest after a checkpoint (contract §11) replaced the oldest `count` increments with one
 * closed pack of their final head: the old checkpoint and those increments become the newest
 * retained entry (retired at the new generation), trimmed to `retainedLimit` entries; newer
 * increments stay active. The checkpoint's publication is the last compacted increment's.
 */
export function compactIncrements(
  m: Manifest,
  init: Omit<UploadedPack, 'head'> & { checkpointId: string; count: number; retainedLimit: number },
): Manifest {
  if (!Number.isInteger(init.count) || init.count < 1 || init.count > m.increments.length) {
    throw new RangeError('count must be between 1 and the number of active increments');
  }
  const compacted = m.increments.slice(0, init.count);
  const last = compacted.at(-1)!;
  const generation = m.generation + 1n;
  const next: Manifest = {
    version: 1,
    generation,
    head: m.head,
    checkpoint: frozen({
      id: init.checkpointId,
      publication: last.publication,
      throughGeneration: last.generation,
      head: last.head,
      key: checkpointKey(last.generation, init.checkpointId),
      sha256: init.sha256,
      size: init.size,
    }),
    increments: m.increments.slice(init.count),
    retained: [
      frozenChain({
        retiredAtGeneration: generation,
        head: last.head,
        checkpoint: m.checkpoint,
        increments: compacted,
      }),
      ...m.retained,
    ].slice(0, Math.max(0, init.retainedLimit)),
  };
  validateManifest(next);
  return next;
}
