import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appendIncrement,
  compactIncrements,
  decodeManifest,
  encodeManifest,
  firstManifest,
  hasPublication,
  lastChainPosition,
  type Manifest,
  ManifestError,
  nextIncrementKey,
  validateManifest,
} from '../src';

const golden = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(join(import.meta.dirname, 'golden', name)));
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const GOLDEN = ['manifest-first.manifest', 'manifest-retained.manifest', 'manifest-u64.manifest'];

/** Serialises any object the way the manifest does numbers: bigint as raw digits. */
function looseText(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `__big__${v}__` : v)).replace(
    /"__big__(\d+)__"/g,
    '$1',
  );
}

/** The retained golden as a mutable plain object. */
// biome-ignore lint/suspicious/noExplicitAny: tests build deliberately malformed shapes.
function sample(): any {
  return structuredClone(decodeManifest(golden('manifest-retained.manifest')));
}

function reasonOf(input: Uint8Array): string {
  try {
    decodeManifest(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return (err as ManifestError).reason;
  }
  throw new Error('decoded without error');
}

describe('manifest v1 golden files', () => {
  it.each(GOLDEN)('decode → encode reproduces %s byte for byte', (name) => {
    const input = golden(name);
    expect(Buffer.from(encodeManifest(decodeManifest(input))).equals(Buffer.from(input))).toBe(
      true,
    );
  });

  it('reads every generation and size as an exact u64, far above 2^53', () => {
    const m = decodeManifest(golden('manifest-u64.manifest'));
    expect(m.generation).toBe(18446744073709551615n);
    expect(m.checkpoint.throughGeneration).toBe(18446744073709551613n);
    expect(m.checkpoint.size).toBe(9007199254740993n);
    expect(m.increments[0]!.generation).toBe(18446744073709551614n);
    expect(m.increments[0]!.size).toBe(18446744073709551615n);
  });

  it('encodes compact JSON with no trailing newline', () => {
    const text = new TextDecoder().decode(
      encodeManifest(decodeManifest(golden('manifest-first.manifest'))),
    );
    expect(text.startsWith('{"version":1,"generation":1,"head":')).toBe(true);
    expect(text).not.toMatch(/\s/);
  });

  it('accepts insignificant JSON white space when decoding', () => {
    const spaced = ` ${new TextDecoder().decode(golden('manifest-first.manifest')).replace(/,/g, ' ,\n ')} `;
    expect(encodeManifest(decodeManifest(bytes(spaced)))).toEqual(
      golden('manifest-first.manifest'),
    );
  });
});

describe('manifest v1 refuses malformed text', () => {
  const text = new TextDecoder().decode(golden('manifest-retained.manifest'));
  const cases: [string, string | Uint8Array][] = [
    [
      'invalid UTF-8',
      Uint8Array.from([...bytes(text.slice(0, 20)), 0xff, ...bytes(text.slice(20))]),
    ],
    ['truncated JSON', text.slice(0, -1)],
    ['trailing data', `${text}x`],
    ['a trailing newline is fine but a second value is not', `${text}\n{}`],
    ['a byte-order mark', `\ufeff${text}`],
    ['an array at the top', `[${text}]`],
    [
      'a raw control character in a string',
      text.replace('packs/checkpoints/3', 'packs/check\u0001points/3'),
    ],
    [
      'a duplicate top-level field',
      text.replace('"generation":6,', '"generation":6,"generation":6,'),
    ],
    [
      'a duplicate field hidden by a later equal value',
      text.replace('"version":1,', '"version":1,"version":1,'),
    ],
    ['a duplicate checkpoint field', text.replace('"size":5000}', '"size":5000,"size":5000}')],
    ['a duplicate increment field', text.replace('"size":300}', '"size":300,"size":301}')],
    [
      'a duplicate field spelled with an escape',
      text.replace('"generation":6,', '"generation":6,"gener\\u0061tion":6,'),
    ],
    ['a number with a leading zero', text.replace('"generation":6', '"generation":06')],
    ['a fractional generation', text.replace('"generation":6', '"generation":6.0')],
    ['an exponent size', text.replace('"size":5000', '"size":5e3')],
    ['a negative size', text.replace('"size":5000', '"size":-5000')],
    [
      'a generation above 2^64-1',
      text.replace('"generation":6', '"generation":18446744073709551616'),
    ],
    ['a quoted generation', text.replace('"generation":6', '"generation":"6"')],
    ['a numeric head', text.replace(/"head":"0606[0-9]+"/, '"head":6')],
    [
      'increments as an object',
      text.replace(/"increments":\[\{"generation":4/, '"increments":{"x":{"generation":4'),
    ],
    ['true as a size', text.replace('"size":5000', '"size":true')],
  ];
  it.each(cases)('refuses %s as INVALID_MANIFEST', (_name, input) => {
    expect(reasonOf(typeof input === 'string' ? bytes(input) : input)).toBe('INVALID_MANIFEST');
  });

  it('accepts one trailing newline only because JSON allows white space', () => {
    expect(() => decodeManifest(bytes(`${text}\n`))).not.toThrow();
  });
});

describe('manifest v1 refuses a wrong shape at every level', () => {
  // biome-ignore lint/suspicious/noExplicitAny: deliberately malformed shapes.
  type Pick = (m: any) => any;
  const levels: [string, Pick][] = [
    ['top level', (m) => m],
    ['checkpoint', (m) => m.checkpoint],
    ['an increment', (m) => m.increments[1]],
    ['a retained entry', (m) => m.retained[0]],
    ['a retained checkpoint', (m) => m.retained[0].checkpoint],
    ['a retained increment', (m) => m.retained[0].increments[0]],
  ];
  for (const [level, pick] of levels) {
    it(`refuses an unknown field at ${level}`, () => {
      const m = sample();
      pick(m).extra = 1;
      expect(reasonOf(bytes(looseText(m)))).toBe('INVALID_MANIFEST');
    });
    it(`refuses a missing field at ${level}`, () => {
      const m = sample();
      const target = pick(m);
      delete target[Object.keys(target).at(-1)!];
      expect(reasonOf(bytes(looseText(m)))).toBe('INVALID_MANIFEST');
    });
    it(`refuses a null field at ${level}`, () => {
      const m = sample();
      const target = pick(m);
      target[Object.keys(target)[1]!] = null;
      expect(reasonOf(bytes(looseText(m)))).toBe('INVALID_MANIFEST');
    });
    it(`refuses a wrong-typed field at ${level}`, () => {
      const m = sample();
      const target = pick(m);
      const first = Object.keys(target)[0]!;
      target[first] = typeof target[first] === 'string' ? 7n : 'seven';
      expect(reasonOf(bytes(looseText(m)))).toBe(
        level === 'top level' ? 'UNSUPPORTED_MANIFEST' : 'INVALID_MANIFEST',
      );
    });
  }
  it('refuses a retained entry that is not an object', () => {
    const m = sample();
    m.retained[0] = [1];
    expect(reasonOf(bytes(looseText(m)))).toBe('INVALID_MANIFEST');
  });
});

describe('manifest v1 version is checked first', () => {
  it.each([
    [
      'version 2',
      (m: Record<string, unknown>) => {
        m.version = 2;
      },
    ],
    [
      'version "1"',
      (m: Record<string, unknown>) => {
        m.version = '1';
      },
    ],
    [
      'version 1.0',
      (m: Record<string, unknown>) => {
        m.version = '__raw1.0';
      },
    ],
    [
      'version 2 with other garbage',
      (m: Record<string, unknown>) => {
        m.version = 2;
        m.generation = null;
        m.unknown = true;
      },
    ],
  ])('reports %s as UNSUPPORTED_MANIFEST', (_name, mutate) => {
    const m = sample();
    mutate(m);
    const text = looseText(m).replace('"__raw1.0"', '1.0');
    expect(reasonOf(bytes(text))).toBe('UNSUPPORTED_MANIFEST');
  });
  it('reports a missing version as INVALID_MANIFEST', () => {
    const m = sample();
    delete m.version;
    expect(reasonOf(bytes(looseText(m)))).toBe('INVALID_MANIFEST');
  });
});

describe('manifest v1 validation rules', () => {
  const otherUuid = '01890a5d-ac9e-7185-b089-7d8e9fa0b1c2';
  // biome-ignore lint/suspicious/noExplicitAny: deliberately invalid manifests.
  const rules: [string, (m: any) => void][] = [
    [
      'generation 0',
      (m) => {
        m.generation = 0n;
      },
    ],
    [
      'pack size 0',
      (m) => {
        m.increments[0].size = 0n;
      },
    ],
    [
      'checkpoint size 0',
      (m) => {
        m.checkpoint.size = 0n;
      },
    ],
    [
      'a key used twice',
      (m) => {
        m.retained[0] = {
          retiredAtGeneration: 4n,
          head: m.checkpoint.head,
          checkpoint: structuredClone(m.checkpoint),
          increments: [],
        };
      },
    ],
    [
      'a checkpoint id used twice',
      (m) => {
        m.retained[0].checkpoint.id = m.checkpoint.id;
        m.retained[0].checkpoint.key = `packs/checkpoints/1-${m.checkpoint.id}.pack`;
      },
    ],
    [
      'throughGeneration above generation',
      (m) => {
        m.generation = 2n;
      },
    ],
    [
      'increments past generation',
      (m) => {
        m.generation = 4n;
      },
    ],
    [
      'a gap in chain positions',
      (m) => {
        const inc = m.increments[1];
        inc.generation = 6n;
        inc.key = `packs/increments/6-${inc.publication}.pack`;
      },
    ],
    [
      'an increment at the cutoff',
      (m) => {
        const inc = m.increments[0];
        inc.generation = 3n;
        inc.key = `packs/increments/3-${inc.publication}.pack`;
      },
    ],
    ['increments out of order', (m) => void m.increments.reverse()],
    [
      'first parent not the checkpoint head',
      (m) => {
        m.increments[0].parent = 'c'.repeat(40);
      },
    ],
    [
      'a later parent not the previous head',
      (m) => {
        m.increments[1].parent = 'c'.repeat(40);
      },
    ],
    [
      'top-level head not the last head',
      (m) => {
        m.head = m.checkpoint.head;
      },
    ],
    [
      'a checkpoint key with the wrong number',
      (m) => {
        m.checkpoint.key = `packs/checkpoints/4-${m.checkpoint.id}.pack`;
      },
    ],
    [
      'an increment key with the wrong id',
      (m) => {
        m.increments[0].key = `packs/increments/4-${otherUuid}.pack`;
      },
    ],
    [
      'an increment key in the checkpoint namespace',
      (m) => {
        m.increments[0].key = m.increments[0].key.replace('increments', 'checkpoints');
      },
    ],
    [
      'an upper-case object id',
      (m) => {
        m.increments[1].head = 'A'.repeat(40);
      },
    ],
    [
      'a short object id',
      (m) => {
        m.increments[1].parent = 'a'.repeat(39);
      },
    ],
    [
      'a bad sha256',
      (m) => {
        m.checkpoint.sha256 = 'g'.repeat(64);
      },
    ],
    [
      'a UUIDv4 checkpoint id',
      (m) => {
        const v4 = '01890a5d-ac9e-4185-b089-7d8e9fa0b1c2';
        m.checkpoint.id = v4;
        m.checkpoint.key = `packs/checkpoints/3-${v4}.pack`;
      },
    ],
    [
      'an upper-case publication id',
      (m) => {
        const up = m.increments[1].publication.toUpperCase();
        m.increments[1].publication = up;
        m.increments[1].key = `packs/increments/5-${up}.pack`;
      },
    ],
    [
      'a publication bound to two heads',
      (m) => {
        m.checkpoint.publication = m.increments[0].publication;
      },
    ],
    [
      'retained entries not strictly decreasing',
      (m) => {
        const older = structuredClone(m.retained[0]);
        older.checkpoint.id = otherUuid;
        older.checkpoint.key = `packs/checkpoints/1-${otherUuid}.pack`;
        older.increments = [];
        older.head = older.checkpoint.head;
        m.retained.push(older); // retired at the same generation: not strictly decreasing
      },
    ],
    [
      'a retained head not its last head',
      (m) => {
        m.retained[0].head = m.retained[0].checkpoint.head;
      },
    ],
    [
      'retiredAtGeneration not above its last chain position',
      (m) => {
        m.retained[0].retiredAtGeneration = 3n;
      },
    ],
    [
      'retiredAtGeneration above generation',
      (m) => {
        m.retained[0].retiredAtGeneration = 7n;
      },
    ],
    [
      'a retained chain with a broken parent',
      (m) => {
        m.retained[0].increments[1].parent = 'c'.repeat(40);
      },
    ],
    [
      'a retained chain with a gap',
      (m) => {
        const inc = m.retained[0].increments[1];
        inc.generation = 4n;
        inc.key = `packs/increments/4-${inc.publication}.pack`;
      },
    ],
  ];
  // The rule each case must break (so a case cannot pass by breaking another rule).
  const because: Record<string, RegExp> = {
    'generation 0': /^generation is out of range/,
    'pack size 0': /increments\[0\]\.size is out of range/,
    'checkpoint size 0': /checkpoint\.size is out of range/,
    'a key used twice': /retained\[0\]\.checkpoint\.key is used twice/,
    'a checkpoint id used twice': /retained\[0\]\.checkpoint\.id is used twice/,
    'throughGeneration above generation': /throughGeneration is above generation/,
    'increments past generation': /increments run past generation/,
    'a gap in chain positions': /increments\[1\]\.generation is not the next chain position/,
    'an increment at the cutoff': /increments\[0\]\.generation is not the next chain position/,
    'increments out of order': /increments\[0\]\.generation is not the next chain position/,
    'first parent not the checkpoint head': /increments\[0\]\.parent is not the previous head/,
    'a later parent not the previous head': /increments\[1\]\.parent is not the previous head/,
    'top-level head not the last head': /^head is not the last head/,
    'a checkpoint key with the wrong number': /checkpoint\.key does not match/,
    'an increment key with the wrong id': /increments\[0\]\.key does not match/,
    'an increment key in the checkpoint namespace': /increments\[0\]\.key does not match/,
    'an upper-case object id': /increments\[1\]\.head is not a 40-hex/,
    'a short object id': /increments\[1\]\.parent is not a 40-hex/,
    'a bad sha256': /checkpoint\.sha256 is not 64/,
    'a UUIDv4 checkpoint id': /checkpoint\.id is not a UUIDv7/,
    'an upper-case publication id': /increments\[1\]\.publication is not a UUIDv7/,
    'a publication bound to two heads': /bound to two different heads/,
    'retained entries not strictly decreasing':
      /retained\[1\]\.retiredAtGeneration does not strictly decrease/,
    'a retained head not its last head': /retained\[0\]\.head is not the last head/,
    'retiredAtGeneration not above its last chain position': /not above its last chain position/,
    'retiredAtGeneration above generation':
      /retained\[0\]\.retiredAtGeneration is above generation/,
    'a retained chain with a broken parent':
      /retained\[0\]\.increments\[1\]\.parent is not the previous head/,
    'a retained chain with a gap': /retained\[0\]\.increments\[1\]\.generation is not the next/,
  };
  it.each(rules)('refuses %s (decode and validate)', (name, mutate) => {
    const m = sample();
    mutate(m);
    expect(() => validateManifest(m)).toThrow(because[name]!);
    expect(reasonOf(bytes(looseText(m)))).toBe('INVALID_MANIFEST');
    expect(() => validateManifest(m)).toThrow(ManifestError);
    expect(() => encodeManifest(m)).toThrow(ManifestError);
  });

  it('accepts a publication id repeated across chains when bound to the same head', () => {
    const m = sample() as Manifest;
    expect(m.checkpoint.publication).toBe(m.retained[0]!.increments[1]!.publication);
    expect(() => validateManifest(m)).not.toThrow();
  });
});

describe('manifest builders', () => {
  const oid = (c: string) => c.repeat(40);
  const sha = (c: string) => c.repeat(64);
  const id = (n: number) => `01890a5d-ac9${n}-7a1e-8f12-0c1d2e3f4a5b`;

  it('builds the first manifest at generation 1 with a checkpoint through position 1', () => {
    const m = firstManifest({
      checkpointId: id(0),
      publication: id(1),
      head: oid('a'),
      sha256: sha('b'),
      size: 10n,
    });
    expect(m.generation).toBe(1n);
    expect(m.checkpoint.throughGeneration).toBe(1n);
    expect(m.checkpoint.publication).toBe(id(1));
    expect(m.checkpoint.key).toBe(`packs/checkpoints/1-${id(0)}.pack`);
    expect(m.head).toBe(oid('a'));
  });

  it('appends increments at consecutive chain positions and counts every replacement', () => {
    let m = firstManifest({
      checkpointId: id(0),
      publication: id(1),
      head: oid('a'),
      sha256: sha('b'),
      size: 10n,
    });
    expect(nextIncrementKey(m, id(2))).toBe(`packs/increments/2-${id(2)}.pack`);
    m = appendIncrement(m, { publication: id(2), head: oid('c'), sha256: sha('c'), size: 5n });
    m = appendIncrement(m, { publication: id(3), head: oid('d'), sha256: sha('d'), size: 5n });
    expect(m.generation).toBe(3n);
    expect(m.increments.map((i) => [i.generation, i.parent])).toEqual([
      [2n, oid('a')],
      [3n, oid('c')],
    ]);
    expect(lastChainPosition(m)).toBe(3n);
    m = compactIncrements(m, {
      checkpointId: id(4),
      count: 1,
      retainedLimit: 1,
      sha256: sha('e'),
      size: 9n,
    });
    expect(m.generation).toBe(4n);
    expect(m.checkpoint).toMatchObject({
      throughGeneration: 2n,
      publication: id(2),
      head: oid('c'),
    });
    expect(m.increments.map((i) => i.generation)).toEqual([3n]);
    expect(m.retained[0]).toMatchObject({ retiredAtGeneration: 4n, head: oid('c') });
    m = appendIncrement(m, { publication: id(5), head: oid('f'), sha256: sha('f'), size: 5n });
    expect(m.generation).toBe(5n);
    expect(m.increments.at(-1)!.generation).toBe(4n);
    expect(hasPublication(m, id(1))).toBe(true);
    expect(hasPublication(m, id(6))).toBe(false);
    const trimmed = compactIncrements(m, {
      checkpointId: id(6),
      count: 2,
      retainedLimit: 0,
      sha256: sha('e'),
      size: 9n,
    });
    expect(trimmed.retained).toEqual([]);
    expect(trimmed.increments).toEqual([]);
    expect(trimmed.head).toBe(oid('f'));
    expect(decodeManifest(encodeManifest(trimmed))).toEqual(trimmed);
  });

  it('refuses to compact more increments than are active', () => {
    const m = firstManifest({
      checkpointId: id(0),
      publication: id(1),
      head: oid('a'),
      sha256: sha('b'),
      size: 10n,
    });
    expect(() =>
      compactIncrements(m, {
        checkpointId: id(2),
        count: 1,
        retainedLimit: 1,
        sha256: sha('b'),
        size: 1n,
      }),
    ).toThrow(RangeError);
  });
});
