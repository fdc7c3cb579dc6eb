import type { CheckpointDescriptor, IncrementDescriptor } from './types';

/**
 * Memory of work that depends only on one descriptor's own fields: its encoded JSON text and
 * whether its own fields passed validation (the format and key-grammar rules of contract §7,
 * not the rules that relate it to its neighbours). Every commit re-encodes and re-validates
 * the whole manifest (retained chain + active chain), and all but its own descriptor are the
 * objects of the manifest it read, so without this memory a commit's cost grows with the chain
 * (docs/performance.md, "Long run").
 *
 * Only frozen descriptors are remembered (keyed by identity): their fields cannot change, so a
 * remembered text or verdict is always the one a fresh computation would give. This package
 * freezes every descriptor it builds or decodes ({@link frozen}); any other object is encoded and
 * validated afresh each time, as before.
 */
export type Descriptor = CheckpointDescriptor | IncrementDescriptor;

const texts = new WeakMap<Descriptor, string>();
const validFields = new WeakSet<Descriptor>();

/** `d`, frozen (the descriptors this package hands out cannot be changed in place). */
export function frozen<T extends Descriptor>(d: T): T {
  return Object.freeze(d);
}

/** `d`'s JSON text by `encode`, computed once per frozen descriptor. */
export function memoJson<T extends Descriptor>(d: T, encode: (d: T) => string): string {
  if (!Object.isFrozen(d)) return encode(d);
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
