import { manifestText } from './encode';
import { type Descriptor, frozen, frozenChain } from './memo';
import type { CheckpointDescriptor, IncrementDescriptor, Manifest, RetainedChain } from './types';

/**
 * The fast way to decode a manifest that is exactly what {@link manifestText} writes (every
 * manifest this implementation or the Go one writes): `JSON.parse`, then the result is
 * validated and encoded again, and it counts only when that text equals the input. The strict
 * decoder (`decode.ts`) returns the same manifest for such text (decode → encode is the
 * identity on it, the golden-file tests), so the two paths cannot disagree on anything this one
 * returns; anything else — white space, escapes, a duplicate or unknown field, a number that
 * `JSON.parse` cannot hold exactly, any invalid manifest — makes it return `undefined`, and the
 * strict decoder decides and reports as before.
 *
 * Descriptors and retained chains equal to one of `previous` (matched by key) are `previous`'s
 * own objects, whose encoded text and validation are remembered (`memo.ts`): the manifest a
 * commit reads differs from the last one its process saw by an increment or two, so this costs
 * one `JSON.parse` and a pass over the chain instead of a strict parse and validation of every
 * entry.
 */
export function decodeCanonical(text: string, previous?: Manifest): Manifest | undefined {
  let plain: unknown;
  try {
    plain = JSON.parse(text);
  } catch {
    return undefined;
  }
  const reuse = previous === undefined ? undefined : reusableOf(previous);
  const manifest = manifestOf(plain, reuse);
  if (manifest === undefined) return undefined;
  try {
    return manifestText(manifest) === text ? manifest : undefined;
  } catch {
    return undefined;
  }
}

type Plain = Record<string, unknown>;

/** What a decode may take over from the previous manifest: its descriptors and retained chains. */
interface Reuse {
  /** Every descriptor (active and retained) by key. */
  descriptors: Map<string, Descriptor>;
  /** Every retained chain by its checkpoint's key. */
  chains: Map<string, RetainedChain>;
}

const indexes = new WeakMap<Manifest, Reuse>();

/** `m`'s descriptors and chains by key, computed once per manifest object. */
function reusableOf(m: Manifest): Reuse {
  let index = indexes.get(m);
  if (index !== undefined) return index;
  index = { descriptors: new Map(), chains: new Map() };
  for (const chain of [m, ...m.retained]) {
    index.descriptors.set(chain.checkpoint.key, chain.checkpoint);
    for (const inc of chain.increments) index.descriptors.set(inc.key, inc);
  }
  for (const chain of m.retained) index.chains.set(chain.checkpoint.key, chain);
  indexes.set(m, index);
  return index;
}

const isObject = (v: unknown): v is Plain =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON number `JSON.parse` held exactly, as a u64 bigint; `undefined` otherwise. */
function u64(v: unknown): bigint | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
}

function strings(o: Plain, names: readonly string[]): boolean {
  return names.every((name) => typeof o[name] === 'string');
}

/** The equal descriptor of `reuse` with the same key, or else `candidate`, frozen. */
function reused<T extends Descriptor>(candidate: T, reuse: Reuse | undefined): T {
  const known = reuse?.descriptors.get(candidate.key) as Plain | undefined;
  if (known !== undefined && sameFields(known, candidate as unknown as Plain)) return known as T;
  return frozen(candidate);
}

function sameFields(a: Plain, b: Plain): boolean {
  const names = Object.keys(b);
  return Object.keys(a).length === names.length && names.every((name) => a[name] === b[name]);
}

function checkpointOf(v: unknown, reuse: Reuse | undefined): CheckpointDescriptor | undefined {
  if (!isObject(v) || !strings(v, ['id', 'publication', 'head', 'key', 'sha256'])) return undefined;
  const throughGeneration = u64(v.throughGeneration);
  const size = u64(v.size);
  if (throughGeneration === undefined || size === undefined) return undefined;
  const c: CheckpointDescriptor = {
    id: v.id as string,
    publication: v.publication as string,
    throughGeneration,
    head: v.head as string,
    key: v.key as string,
    sha256: v.sha256 as string,
    size,
  };
  return reused(c, reuse);
}

function incrementsOf(v: unknown, reuse: Reuse | undefined): IncrementDescriptor[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const list: IncrementDescriptor[] = [];
  for (const item of v) {
    if (!isObject(item) || !strings(item, ['publication', 'parent', 'head', 'key', 'sha256']))
      return undefined;
    const generation = u64(item.generation);
    const size = u64(item.size);
    if (generation === undefined || size === undefined) return undefined;
    const inc: IncrementDescriptor = {
      generation,
      publication: item.publication as string,
      parent: item.parent as string,
      head: item.head as string,
      key: item.key as string,
      sha256: item.sha256 as string,
      size,
    };
    list.push(reused(inc, reuse));
  }
  return list;
}

function retainedOf(v: unknown, reuse: Reuse | undefined): RetainedChain | undefined {
  if (!isObject(v) || typeof v.head !== 'string') return undefined;
  const retiredAtGeneration = u64(v.retiredAtGeneration);
  const checkpoint = checkpointOf(v.checkpoint, reuse);
  const increments = incrementsOf(v.increments, reuse);
  if (retiredAtGeneration === undefined || checkpoint === undefined || increments === undefined)
    return undefined;
  const chain = { retiredAtGeneration, head: v.head, checkpoint, increments };
  const known = reuse?.chains.get(checkpoint.key);
  return known !== undefined && sameChain(known, chain) ? known : frozenChain(chain);
}

/** True when two retained chains have equal fields and the very same descriptors. */
function sameChain(a: RetainedChain, b: RetainedChain): boolean {
  return (
    a.retiredAtGeneration === b.retiredAtGeneration &&
    a.head === b.head &&
    a.checkpoint === b.checkpoint &&
    a.increments.length === b.increments.length &&
    a.increments.every((inc, i) => inc === b.increments[i])
  );
}

function manifestOf(v: unknown, reuse: Reuse | undefined): Manifest | undefined {
  if (!isObject(v) || v.version !== 1 || typeof v.head !== 'string') return undefined;
  const generation = u64(v.generation);
  const checkpoint = checkpointOf(v.checkpoint, reuse);
  const increments = incrementsOf(v.increments, reuse);
  if (generation === undefined || checkpoint === undefined || increments === undefined)
    return undefined;
  if (!Array.isArray(v.retained)) return undefined;
  const retained: RetainedChain[] = [];
  for (const item of v.retained) {
    const chain = retainedOf(item, reuse);
    if (chain === undefined) return undefined;
    retained.push(chain);
  }
  return { version: 1, generation, head: v.head, checkpoint, increments, retained };
}
