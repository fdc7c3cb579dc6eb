import fc from 'fast-check';

/**
 * Characters that sit on the edges of the path, message and text rules: separators, dots,
 * NUL, lone surrogates, combining marks and precomposed forms (NFC), case-folding
 * expanders, Unicode white space that JavaScript's `\s` gets wrong, Windows device names,
 * marker fragments and line endings.
 */
const EDGE_PIECES = [
  '/',
  '//',
  '\\',
  '.',
  '..',
  '.git',
  ' ',
  '~',
  '~/',
  ':',
  '*',
  '?',
  '"',
  '<',
  '>',
  '|',
  '\u0000',
  '\u0001',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u00a0',
  '\u3000',
  '\ufeff',
  '\u200b',
  '\ud800',
  '\udc00',
  '\ud83d\ude00',
  'e\u0301',
  '\u00e9',
  '\u212b',
  'ß',
  'ẞ',
  'STRASSE',
  'İ',
  'ı',
  'ﬀ',
  'Σ',
  'ς',
  'CON',
  'con.txt',
  'Lpt9',
  'nul.tar.gz',
  'COM0',
  '\n',
  '\r\n',
  '\r',
  '\t',
  '<<<<<<< local',
  '=======',
  '>>>>>>> remote',
  'a',
  'Z',
  '0',
];

/** One edge piece or a short run of arbitrary code units (lone surrogates included). */
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_PIECES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      maxLength: 4,
    }),
  },
);

/** Strings assembled from edge pieces: the inputs the text rules most likely get wrong. */
export const edgyString = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''));

/** Segment-shaped strings joined with `/`: relative notebook paths, valid and not. */
export const notebookPathLike = fc
  .array(
    fc.oneof(
      edgyString,
      fc.constantFrom('notes', 'a.md', 'Straße.md', 'x'.repeat(255), 'y'.repeat(256)),
    ),
    {
      minLength: 0,
      maxLength: 8,
    },
  )
  .map((segments) => segments.join('/'));

/** Strings just below, at and above a byte limit, built from multi-byte characters. */
export function aroundByteLimit(limit: number): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom('a', 'é', '€', '\ud83d\ude00', ' ', '\u3000'),
      fc.integer({ min: -4, max: 4 }),
    )
    .map(([unit, delta]) => {
      const bytes = Buffer.byteLength(unit);
      return unit.repeat(Math.max(0, Math.floor(limit / bytes) + delta));
    });
}
