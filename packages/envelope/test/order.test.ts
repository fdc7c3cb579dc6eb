import { describe, expect, it } from 'vitest';
import { compareUtf8, sortByUtf8 } from '../src/order';

// U+E000 sorts before U+1F600 by UTF-8 bytes (EE… < F0…) but after it by UTF-16 code units.
const PRIVATE_USE = '\uE000';
const EMOJI = '\u{1F600}';

describe('UTF-8 byte order', () => {
  it('compareUtf8 orders by bytes, not UTF-16 code units', () => {
    expect([EMOJI, PRIVATE_USE].sort()).toEqual([EMOJI, PRIVATE_USE]);
    expect([EMOJI, PRIVATE_USE].sort(compareUtf8)).toEqual([PRIVATE_USE, EMOJI]);
  });

  it('sortByUtf8 gives the order of compareUtf8, with and without surrogates', () => {
    const plain = ['b/c.md', 'a.md', 'B.md', 'a/b.md', 'é.md'];
    const mixed = [...plain, `${EMOJI}.md`, `${PRIVATE_USE}.md`];
    for (const paths of [plain, mixed]) {
      const byKey = sortByUtf8(
        paths.map((path) => ({ path })),
        (entry) => entry.path,
      ).map((entry) => entry.path);
      expect(byKey).toEqual([...paths].sort(compareUtf8));
    }
  });
});
