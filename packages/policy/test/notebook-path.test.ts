import { describe, expect, it } from 'vitest';
import { checkNotebookPath, checkSegment, foldKey } from '../src/index';

describe('checkNotebookPath (contract §4)', () => {
  it.each([
    'notes/today.md',
    'a',
    'Straße.md',
    'docs/CONSOLE.md',
    'com10.txt',
    'x/.gitignore',
    'a b/c-d_e.md',
    `${'é'.repeat(127)}x`, // 255 bytes
  ])('accepts %j', (path) => {
    expect(checkNotebookPath(path)).toBeUndefined();
  });

  it.each([
    ['', 'empty path'],
    ['a//b', 'empty segment'],
    ['/abs', 'leading slash'],
    ['a/', 'trailing slash'],
    ['..', 'dot-dot'],
    ['a/../b', 'dot-dot segment'],
    ['.', 'dot'],
    ['x/.git', '.git'],
    ['.git/config', '.git directory'],
    ['CON.txt', 'device with extension'],
    ['con', 'device lower case'],
    ['docs/LPT9.tar.gz', 'device with double extension'],
    ['aux', 'AUX'],
    ['COM1', 'COM1'],
    ['a.', 'trailing dot'],
    ['a ', 'trailing space'],
    ['a\u0000b', 'NUL'],
    ['a\u001fb', 'C0 control'],
    ['a\u007fb', 'DEL'],
    ['a\u0085b', 'C1 control'],
    ['a\\b', 'backslash'],
    ['a:b', 'colon'],
    ['a*b', 'star'],
    ['a?b', 'question mark'],
    ['a"b', 'quote'],
    ['a<b', 'less-than'],
    ['a>b', 'greater-than'],
    ['a|b', 'pipe'],
    ['Stras\u0073e\u0301.md', 'NFD name'],
    ['a\ud800b', 'lone surrogate'],
  ])('rejects %j (%s) as INVALID_NAME', (path) => {
    expect(checkNotebookPath(path)).toBe('INVALID_NAME');
  });

  it('rejects a 256-byte segment as PATH_TOO_LONG', () => {
    expect(checkSegment('a'.repeat(255))).toBeUndefined();
    expect(checkNotebookPath(`d/${'a'.repeat(256)}`)).toBe('PATH_TOO_LONG');
    expect(checkNotebookPath(`${'é'.repeat(128)}`)).toBe('PATH_TOO_LONG');
  });

  it('rejects a path over 4,096 bytes as PATH_TOO_LONG', () => {
    const segment = 'a'.repeat(200);
    const exact = `${Array(20).fill(segment).join('/')}/${'b'.repeat(76)}`; // 4,096 bytes
    expect(Buffer.byteLength(exact)).toBe(4096);
    expect(checkNotebookPath(exact)).toBeUndefined();
    expect(checkNotebookPath(`${exact}b`)).toBe('PATH_TOO_LONG');
  });
});

describe('foldKey (full Unicode case folding after NFC)', () => {
  it('makes Straße.md collide with STRASSE.md (status F)', () => {
    expect(foldKey('Straße.md')).toBe(foldKey('STRASSE.md'));
    expect(foldKey('ẞ')).toBe(foldKey('ss'));
  });

  it('folds every segment, directories included', () => {
    expect(foldKey('Docs/Notes.MD')).toBe(foldKey('docs/notes.md'));
  });

  it('equates NFC and NFD spellings', () => {
    expect(foldKey('Caf\u0065\u0301')).toBe(foldKey('caf\u00e9'));
  });

  it('uses the full, not the Turkic, folding and keeps distinct names apart', () => {
    expect(foldKey('İ')).toBe('i\u0307');
    expect(foldKey('ΣΑΣ')).toBe(foldKey('σας'));
    expect(foldKey('a.md')).not.toBe(foldKey('b.md'));
  });
});

describe('foldKey ASCII fast path', () => {
  it('agrees with the full table for every ASCII character', async () => {
    const { caseFold } = await import('unicode-case-folding');
    const ascii = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join('');
    expect(foldKey(ascii)).toBe(caseFold(ascii));
    expect(foldKey('K')).toBe('k');
    expect(foldKey('\u212a')).toBe('k'); // KELVIN SIGN folds into ASCII
  });
});
