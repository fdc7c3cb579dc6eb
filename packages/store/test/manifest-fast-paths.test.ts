import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendIncrement,
  compactIncrements,
  decodeManifest,
  encodeManifest,
  firstManifest,
  type IncrementDescriptor,
  type Manifest,
  ManifestError,
  newUuidV7,
  validateManifest,
} from '../src';
import { decodeStrict } from '../src/manifest/decode';

// The manifest's fast paths (remembered descriptor text and validation, the canonical decode
// with reuse of the previous manifest's descriptors) against the plain paths: byte-identical
// output, the same manifest, and the same refusal (reason and message) for every input.

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Deterministic hex from a counter, so a failing case replays from its seed. */
function hex(chars: number, seed: number): string {
  let out = '';
  for (let i = 0; out.length < chars; i += 1)
    out += ((seed * 2654435761 + i * 40503) >>> 0).toString(16).padStart(8, '0');
  return out.slice(0, chars);
}

/** A UUIDv7 whose timestamp part comes from `seed` (unique per seed). */
function uuid(seed: number): string {
  const ms = 1_700_000_000_000 + seed;
  return newUuidV7(ms).replace(/^.{8}/, ms.toString(16).slice(-8));
}

/** A valid manifest grown by `steps`: a number appends that many increments, a negative one compacts. */
function grow(steps: number[], retainedLimit: number): Manifest {
  let seed = 1;
  const next = (): number => {
    seed += 1;
    return seed;
  };
  let m = firstManifest({
    head: hex(40, next()),
    sha256: hex(64, next()),
    size: 10n,
    checkpointId: uuid(next()),
    publication: uuid(next()),
  });
  for (const step of steps) {
    if (step > 0) {
      for (let i = 0; i < step; i += 1)
        m = appendIncrement(m, {
          head: hex(40, next()),
          sha256: hex(64, next()),
          size: BigInt(1 + (seed % 900)),
          publication: uuid(next()),
        });
    } else if (m.increments.length > 0) {
      m = compactIncrements(m, {
        checkpointId: uuid(next()),
        sha256: hex(64, next()),
        size: 5000n,
        count: Math.max(1, Math.min(m.increments.length, -step)),
        retainedLimit,
      });
    }
  }
  return m;
}

const arbManifest = fc
  .tuple(fc.array(fc.integer({ min: -6, max: 6 }), { minLength: 1, maxLength: 8 }), fc.nat(3))
  .map(([steps, limit]) => grow(steps, limit));

/** Text like the encoder's (same field order), for any shape, valid or not. */
function looseText(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `__big__${v}__` : v)).replace(
    /"__big__(-?\d+)__"/g,
    '$1',
  );
}

/** What a call gives: its value, or the refusal's reason and message. */
function outcome<T>(run: () => T): { ok: T } | { reason: string; message: string } {
  try {
    return { ok: run() };
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    return { reason: err.reason, message: err.message };
  }
}

const REPLACEMENTS: unknown[] = [
  0n,
  1n,
  2n ** 53n + 1n,
  2n ** 64n,
  -1n,
  '',
  'A'.repeat(40),
  hex(39, 7),
  hex(64, 8),
  '01890a5d-ac9e-4185-b089-7d8e9fa0b1c2',
  'packs/increments/1-x.pack',
  null,
];

/**
 * One change to a valid manifest, made the way a caller would (a changed copy of one descriptor
 * or chain, the untouched descriptors shared with `m`, so they keep their remembered text and
 * validation): a field of the top, of a checkpoint or of an increment set to a value of another
 * descriptor or to a broken one; an increment dropped, duplicated or swapped; a retained
 * chain's head or retirement changed; the retained chains reordered (the others stay shared);
 * the generation lowered; a retained chain listed twice.
 */
const arbChange = fc.record({
  chain: fc.nat(),
  index: fc.nat(),
  field: fc.constantFrom(
    'generation',
    'head',
    'parent',
    'publication',
    'key',
    'sha256',
    'size',
    'id',
    'throughGeneration',
    'retiredAtGeneration',
  ),
  kind: fc.constantFrom(
    'foreign',
    'broken',
    'drop',
    'duplicate',
    'swap',
    'checkpoint',
    'chain',
    'retained-order',
    'generation-down',
    'chain-twice',
  ),
  pick: fc.nat(),
});

type Change = typeof arbChange extends fc.Arbitrary<infer T> ? T : never;

// biome-ignore lint/suspicious/noExplicitAny: builds deliberately malformed shapes.
type Loose = any;

function changed(m: Manifest, c: Change): Loose {
  const chains: Loose[] = [m, ...m.retained];
  const all = chains.flatMap((ch) => [ch.checkpoint, ...ch.increments]);
  const ci = c.chain % chains.length;
  const top: Loose = { ...m, retained: [...m.retained] };
  const chain: Loose = ci === 0 ? top : { ...m.retained[ci - 1] };
  if (ci > 0) top.retained[ci - 1] = chain;
  chain.increments = [...chain.increments];
  const list: IncrementDescriptor[] = chain.increments;
  const i = list.length === 0 ? -1 : c.index % list.length;
  const foreign = all[c.pick % all.length] as Loose;
  const value =
    c.kind === 'foreign'
      ? (foreign[c.field] ?? foreign.head)
      : REPLACEMENTS[c.pick % REPLACEMENTS.length];
  if (c.kind === 'chain-twice' && top.retained.length > 0)
    top.retained.unshift(top.retained.at(-1));
  else if (c.kind === 'generation-down') top.generation = m.generation - BigInt(1 + (c.pick % 4));
  else if (c.kind === 'retained-order' && top.retained.length > 1) top.retained.reverse();
  else if (c.kind === 'chain' && ci > 0)
    chain[c.field === 'head' ? 'head' : 'retiredAtGeneration'] = value;
  else if (c.kind === 'drop' && i >= 0) list.splice(i, 1);
  else if (c.kind === 'duplicate' && i >= 0) list.splice(i, 0, list[i]!);
  else if (c.kind === 'swap' && list.length > 1) {
    const j = (i + 1) % list.length;
    [list[i], list[j]] = [list[j]!, list[i]!];
  } else if (c.kind === 'checkpoint' || i < 0)
    chain.checkpoint = { ...chain.checkpoint, [c.field]: value };
  else if (c.field === 'retiredAtGeneration') chain[ci > 0 ? c.field : 'generation'] = value;
  else list[i] = { ...list[i], [c.field]: value } as IncrementDescriptor;
  return top;
}

describe('manifest fast paths', () => {
  it('encode gives the same bytes with remembered descriptors as without, and decodes back', () => {
    fc.assert(
      fc.property(arbManifest, (m) => {
        const fresh = encodeManifest(structuredClone(m));
        const first = encodeManifest(m);
        const again = encodeManifest(m);
        expect(Buffer.from(first).equals(Buffer.from(fresh))).toBe(true);
        expect(Buffer.from(again).equals(Buffer.from(fresh))).toBe(true);
        const text = dec.decode(first);
        const strict = decodeStrict(text);
        expect(decodeManifest(first)).toEqual(strict);
        expect(decodeManifest(first, m)).toEqual(strict);
        expect(strict).toEqual(m);
      }),
      { numRuns: 150 },
    );
  });

  it('refuses every changed manifest exactly as the plain paths do', () => {
    fc.assert(
      fc.property(arbManifest, arbChange, (m, c) => {
        encodeManifest(m); // remembers m's descriptors
        const next = changed(m, c);
        const plain = structuredClone(next);
        const validated = outcome(() => validateManifest(next));
        expect(validated).toEqual(outcome(() => validateManifest(plain)));
        const encoded = outcome(() => dec.decode(encodeManifest(next)));
        expect(encoded).toEqual(outcome(() => dec.decode(encodeManifest(plain))));
        const text = looseText(next);
        const strict = outcome(() => decodeStrict(text));
        expect(outcome(() => decodeManifest(enc.encode(text), m))).toEqual(strict);
        expect(outcome(() => decodeManifest(enc.encode(text)))).toEqual(strict);
      }),
      { numRuns: 400 },
    );
  });

  it('decoding with the previous manifest reuses its equal descriptors, all frozen', () => {
    const m = grow([5, -3, 4], 2);
    const next = appendIncrement(m, {
      head: hex(40, 9001),
      sha256: hex(64, 9002),
      size: 7n,
      publication: uuid(9003),
    });
    const decoded = decodeManifest(encodeManifest(next), m);
    expect(decoded).toEqual(next);
    expect(decoded.increments.slice(0, -1).every((inc, i) => inc === m.increments[i])).toBe(true);
    expect(decoded.retained[0]).toBe(m.retained[0]);
    expect(Object.isFrozen(decoded.retained[0]!.increments)).toBe(true);
    expect(decoded.increments.at(-1)).not.toBe(next.increments.at(-1));
    expect(Object.isFrozen(decoded.increments.at(-1))).toBe(true);
    expect(() => {
      (decoded.increments[0] as { size: bigint }).size = 1n;
    }).toThrow(TypeError);
  });

  it('takes the strict path for text the encoder would not write, with the same result', () => {
    const golden = new Uint8Array(
      readFileSync(join(import.meta.dirname, 'golden', 'manifest-u64.manifest')),
    );
    const text = dec.decode(golden);
    // Integers above 2^53: JSON.parse cannot hold them, the strict decoder reads them exactly.
    expect(decodeManifest(golden)).toEqual(decodeStrict(text));
    expect(decodeManifest(golden).generation).toBe(18446744073709551615n);
    const spaced = text.replace(/,/g, ', ');
    expect(decodeManifest(enc.encode(spaced))).toEqual(decodeStrict(text));
  });
});
