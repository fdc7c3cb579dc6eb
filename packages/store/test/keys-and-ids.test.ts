import { describe, expect, it } from 'vitest';
import {
  checkpointKey,
  fullKey,
  incrementKey,
  isUuidV7,
  keyKind,
  newUuidV7,
  parsePackKey,
  prefixProblem,
  probeKey,
} from '../src';

const ID = '01890a5d-ac96-774b-bcce-b302099a8057';

describe('key grammar', () => {
  it('builds pack and probe keys from their parts', () => {
    expect(checkpointKey(1n, ID)).toBe(`packs/checkpoints/1-${ID}.pack`);
    expect(incrementKey(18446744073709551615n, ID)).toBe(
      `packs/increments/18446744073709551615-${ID}.pack`,
    );
    expect(probeKey(ID)).toBe(`probe/${ID}`);
  });

  it.each([
    ['current', 'current'],
    [`probe/${ID}`, 'probe'],
    [`packs/checkpoints/1-${ID}.pack`, 'checkpoint'],
    [`packs/increments/0-${ID}.pack`, 'increment'],
    [`packs/increments/18446744073709551615-${ID}.pack`, 'increment'],
  ])('classifies %s as %s', (key, kind) => {
    expect(keyKind(key)).toBe(kind);
  });

  it.each([
    'Current',
    '/current',
    'current/',
    `probe/${ID.toUpperCase()}`,
    'probe/not-a-uuid',
    `packs/increments/01-${ID}.pack`,
    `packs/increments/18446744073709551616-${ID}.pack`,
    `packs/increments/-1-${ID}.pack`,
    `packs/increments/1-${ID}`,
    `packs/other/1-${ID}.pack`,
    `packs/increments/1-${ID.replace('-7', '-4')}.pack`,
    `packs/increments/1-${ID}.pack/x`,
  ])('refuses %s', (key) => {
    expect(keyKind(key)).toBeUndefined();
  });

  it('parses a pack key into its number and id', () => {
    expect(parsePackKey(incrementKey(42n, ID))).toEqual({ kind: 'increment', number: 42n, id: ID });
    expect(parsePackKey('current')).toBeUndefined();
  });

  it.each(['', 'slivingdoc', 'a/b/c', 'team.notes', '...x'])('accepts the prefix %j', (prefix) => {
    expect(prefixProblem(prefix)).toBeUndefined();
  });

  it.each(['/a', 'a/', 'a//b', '.', '..', 'a/./b', 'a/../b', 'a\\b'])(
    'refuses the prefix %j',
    (prefix) => {
      expect(prefixProblem(prefix)).toBeTypeOf('string');
    },
  );

  it('applies the prefix, and none for the bucket root', () => {
    expect(fullKey('slivingdoc', 'current')).toBe('slivingdoc/current');
    expect(fullKey('', 'current')).toBe('current');
  });
});

describe('UUIDv7', () => {
  it('makes lowercase canonical version-7 RFC 4122 ids that carry the time', () => {
    const id = newUuidV7(0x0189_0a5d_ac96);
    expect(isUuidV7(id)).toBe(true);
    expect(id.startsWith('01890a5d-ac96-7')).toBe(true);
    expect('89ab').toContain(id[19]);
  });

  it('makes distinct ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newUuidV7()));
    expect(ids.size).toBe(1000);
  });

  it.each([
    ID.toUpperCase(),
    '01890a5d-ac96-474b-bcce-b302099a8057',
    '01890a5d-ac96-774b-3cce-b302099a8057',
    '01890a5dac96774bbcceb302099a8057',
    `${ID} `,
    '',
  ])('refuses %j', (s) => {
    expect(isUuidV7(s)).toBe(false);
  });
});
