import type { CheckpointDescriptor, IncrementDescriptor, RetainedChain } from './types';

/**
 * Memory of work that depends only on one descriptor's own fields: its encoded JSON text and
 * whether its own fields passed validation (the format and key-grammar rules of contract §7,
 * not the rules that relate it to its neighbours). Every commit re-encodes and re-validates
 * the whole manifest (retained chain + active chain), and all but its own descriptor are the
 * objects of the manifest it read, so without this memory a commit's cost grows with the chain
 * (docs/performance.md, "Long run").
 *
 * A retained chain, which stays the same from one checkpoint to the next, is remembered whole
 * the same way: its text, and that the rules within the chain (positions, parents, its head,
 * its retirement above its last position) hold.
 *
 * Only frozen descriptors and chains are remembered (keyed by identity; a chain only when its
 * checkpoint, its increments array and every increment are frozen too): they cannot change, so
 * a remembered text or verdict is always the one a fresh computation would give. This package
 * freezes every descriptor and retained chain it builds or decodes ({@link frozen},
 * {@link frozenChain}); any other object is encoded and validated afresh each time, as before.
 */
export type Descriptor = CheckpointDescriptor | IncrementDescriptor;

const texts = new WeakMap<Descriptor | RetainedChain, string>();
const validFields = new WeakSet<Descriptor>();
const validChains = new WeakSet<RetainedChain>();
const deeplyFrozen = new WeakSet<RetainedChain>();

/** `d`, frozen (the descriptors this package hands out cannot be changed in place). */
export function frozen<T extends Descriptor>(d: T): T {
  return Object.freeze(d);
}

/** `r` and its increments array, frozen (its descriptors should be already). */
export function frozenChain(r: RetainedChain): RetainedChain {
  Object.freeze(r.increments);
  return Object.freeze(r);
}

/** True when `r`, its checkpoint, its increments array and every increment are frozen. */
function isDeeplyFrozen(r: RetainedChain): boolean {
  if (deeplyFrozen.has(r)) return true;
  const yes =
    Object.isFrozen(r) &&
    Object.isFrozen(r.checkpoint) &&
    Object.isFrozen(r.increments) &&
    r.increments.every((inc) => Object.isFrozen(inc));
  if (yes) deeplyFrozen.add(r);
  return yes;
}

/** The JSON text of descriptor `d` by `encode`, computed once per frozen descriptor. */
export function memoJson<T extends Descriptor>(d: T, encode: (d: T) => string): string {
  return Object.isFrozen(d) ? remembered(d, encode) : encode(d);
}

/** The JSON text of retained chain `r` by `encode`, computed once per immutable chain. */
export function memoChainJson(r: RetainedChain, encode: (r: RetainedChain) => string): string {
  return isDeeplyFrozen(r) ? remembered(r, encode) : encode(r);
}

function remembered<T extends Descriptor | RetainedChain>(d: T, encode: (d: T) => string): string {
  let text = texts.get(d);
  if (text === undefined) {
    text = encode(d);
    texts.set(d, text);
  }
  return text;
}

/** True when `d`'s own fields passed validation (and, being frozen, cannot have changed). */
export function fieldsKnownValid(d: Descriptor): boolean {
  return validFields.has(d);
}

/** Records that `d`'s own fields passed validation (remembered only when `d` is frozen). */
export function markFieldsValid(d: Descriptor): void {
  if (Object.isFrozen(d)) validFields.add(d);
}

/** True when the rules within retained chain `r` held and `r` cannot have changed since. */
export function chainKnownValid(r: RetainedChain): boolean {
  return validChains.has(r);
}

/** Records that the rules within retained chain `r` hold (remembered only when immutable). */
export function markChainValid(r: RetainedChain): void {
  if (isDeeplyFrozen(r)) validChains.add(r);
}
