import { describe, expect, it } from 'vitest';
import { createPathPolicy, PathSetError } from '../src/index';

describe('createPathPolicy: normalisation (contract §5)', () => {
  it('normalises (NFC, ./, trailing /), deduplicates and sorts by UTF-8 bytes', () => {
    const policy = createPathPolicy({
      writable: ['./notes/', 'notes', 'Caf\u0065\u0301', 'b//c', 'B'],
      readOnly: [],
    });
    expect(policy.sets).toEqual({ readOnly: [], writable: ['B', 'Caf\u00e9', 'b/c', 'notes'] });
  });

  it.each([
    ['an entry in both sets', { writable: ['docs'], readOnly: ['./docs/'] }],
    ['an absolute entry', { writable: ['/docs'], readOnly: [] }],
    ['an empty entry', { writable: [''], readOnly: [] }],
    ['a ./ only entry', { writable: [], readOnly: ['./'] }],
    ['a .. entry', { writable: ['a/../b'], readOnly: [] }],
    ['a device name', { writable: [], readOnly: ['CON.txt'] }],
    ['a trailing dot', { writable: [], readOnly: ['a.'] }],
  ])('refuses %s at startup', (_name, init) => {
    expect(() => createPathPolicy(init)).toThrow(PathSetError);
  });
});

describe('createPathPolicy: isWritable table', () => {
  const cases: [string, { writable: string[]; readOnly: string[] }, [string, boolean][]][] = [
    ['no sets', { writable: [], readOnly: [] }, [['anything.md', true]]],
    [
      'only writable',
      { writable: ['notes', 'faq.md'], readOnly: [] },
      [
        ['notes', true],
        ['notes/a.md', true],
        ['notes/deep/b.md', true],
        ['faq.md', true],
        ['faq.md.bak', false],
        ['notesx/a.md', false],
        ['other.md', false],
      ],
    ],
    [
      'only read-only',
      { writable: [], readOnly: ['docs', 'faq.md'] },
      [
        ['docs/a.md', false],
        ['faq.md', false],
        ['faq.mdx', true],
        ['docsy/a.md', true],
        ['notes/a.md', true],
      ],
    ],
    [
      'segment-wise matching: doc does not match docs/x',
      { writable: [], readOnly: ['doc'] },
      [
        ['docs/x', true],
        ['doc/x', false],
        ['doc', false],
      ],
    ],
    [
      'both, read-only nested in writable',
      { writable: ['notes'], readOnly: ['notes/archive'] },
      [
        ['notes/a.md', true],
        ['notes/archive/a.md', false],
        ['notes/archived.md', true],
        ['other.md', false],
      ],
    ],
    [
      'both, writable nested in read-only',
      { writable: ['docs/drafts'], readOnly: ['docs'] },
      [
        ['docs/a.md', false],
        ['docs/drafts/a.md', true],
        ['docs/drafts', true],
        ['docs/draftsx/a.md', false],
        ['top.md', false],
      ],
    ],
    [
      'an entry equal to a file',
      { writable: ['notes/a.md'], readOnly: ['notes'] },
      [
        ['notes/a.md', true],
        ['notes/b.md', false],
        ['notes/a.md/x', true],
      ],
    ],
  ];

  for (const [name, init, table] of cases) {
    it.each(table)(`${name}: %j writable → %s`, (path, writable) => {
      expect(createPathPolicy(init).isWritable(path)).toBe(writable);
    });
  }

  it('matches exactly after NFC', () => {
    const policy = createPathPolicy({ writable: ['caf\u00e9'], readOnly: [] });
    expect(policy.isWritable('cafe\u0301/x.md')).toBe(true);
    expect(policy.isWritable('CAF\u00c9/x.md')).toBe(false);
  });
});
