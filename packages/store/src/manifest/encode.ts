import { memoChainJson, memoJson } from './memo';
import type { CheckpointDescriptor, IncrementDescriptor, Manifest, RetainedChain } from './types';
import { validateManifest } from './validate';

// Strings in a valid manifest are hex, UUIDs and keys; JSON.stringify escapes them the way
// Go's encoder does for that alphabet. Integers are written from bigint, never via Number.
const s = (value: string): string => JSON.stringify(value);

const checkpointText = (c: CheckpointDescriptor): string =>
  `{"id":${s(c.id)},"publication":${s(c.publication)},"throughGeneration":${c.throughGeneration},"head":${s(c.head)},"key":${s(c.key)},"sha256":${s(c.sha256)},"size":${c.size}}`;

const incrementText = (i: IncrementDescriptor): string =>
  `{"generation":${i.generation},"publication":${s(i.publication)},"parent":${s(i.parent)},"head":${s(i.head)},"key":${s(i.key)},"sha256":${s(i.sha256)},"size":${i.size}}`;

// A descriptor's or retained chain's text is computed once per immutable object (memo.ts): a
// commit re-encodes every retained and active descriptor, all but its own the same as before.
const checkpointJson = (c: CheckpointDescriptor): string => memoJson(c, checkpointText);

function incrementsJson(list: IncrementDescriptor[]): string {
  return `[${list.map((i) => memoJson(i, incrementText)).join(',')}]`;
}

const retainedText = (r: RetainedChain): string =>
  `{"retiredAtGeneration":${r.retiredAtGeneration},"head":${s(r.head)},"checkpoint":${checkpointJson(r.checkpoint)},"increments":${incrementsJson(r.increments)}}`;

/** {@link encodeManifest}'s text, before UTF-8 encoding (validated first the same way). */
export function manifestText(m: Manifest): string {
  validateManifest(m);
  const retained = m.retained.map((r) => memoChainJson(r, retainedText));
  return `{"version":${m.version},"generation":${m.generation},"head":${s(m.head)},"checkpoint":${checkpointJson(m.checkpoint)},"increments":${incrementsJson(m.increments)},"retained":[${retained.join(',')}]}`;
}

/**
 * Encodes a manifest as compact JSON in the exact field order of contract §7, integers unquoted,
 * no trailing newline. Validates first, so an invalid manifest is never written.
 */
export function encodeManifest(m: Manifest): Uint8Array {
  return new TextEncoder().encode(manifestText(m));
}
