import { describe, expect, it } from 'vitest';
import { findMarkerBlocks, lineDiffStat, type MergeAdditions, mergeText } from '../src/index';
import { text, utf8 } from './git-oracle';

const merge = (base: string, local: string, remote: string, additions: MergeAdditions = 'keep') => {
  const result = mergeText(utf8(base), utf8(local), utf8(remote), { additions });
  return { content: text(result.content), conflicts: result.conflicts };
};

describe('mergeText', () => {
  it('merges changes to different regions cleanly and keeps identical changes once', () => {
    expect(merge('a\nb\nc\nd\ne\n', 'A\nb\nc\nd\ne\n', 'a\nb\nc\nd\nE\n')).toEqual({
      content: 'A\nb\nc\nd\nE\n',
      conflicts: [],
    });
    expect(merge('a\nb\nc\n', 'a\nX\nc\n', 'a\nX\nc\n')).toEqual({
      content: 'a\nX\nc\n',
      conflicts: [],
    });
  });

  it('writes the exact markers with one-based inclusive ranges of the written content', () => {
    expect(merge('a\nb\nc\n', 'a\nL\nc\n', 'a\nR\nc\n')).toEqual({
      content: 'a\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\nc\n',
      conflicts: [{ start: 2, end: 6 }],
    });
  });

  it('treats edits on adjacent lines as a conflict, as git does', () => {
    expect(merge('a\nb\nc\nd\n', 'a\nB\nc\nd\n', 'a\nb\nC\nd\n').conflicts).toHaveLength(1);
  });

  it('uses CRLF marker lines when the local side’s first line ending is CRLF', () => {
    expect(merge('a\r\nb\r\n', 'a\r\nL\r\n', 'a\r\nR\r\n').content).toBe(
      'a\r\n<<<<<<< local\r\nL\r\n=======\r\nR\r\n>>>>>>> remote\r\n',
    );
  });

  it('takes the remote side’s line ending when the local side has none', () => {
    expect(merge('', 'L', 'R\r\nx\r\n', 'conflict').content).toBe(
      '<<<<<<< local\r\nL\r\n=======\r\nR\r\nx\r\n>>>>>>> remote\r\n',
    );
  });

  it('terminates a side whose last line has no line ending before the next marker', () => {
    expect(merge('a\nb', 'a\nL', 'a\nR')).toEqual({
      content: 'a\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\n',
      conflicts: [{ start: 2, end: 6 }],
    });
  });

  it('keeps each side’s line endings and a missing final newline in clean merges', () => {
    expect(merge('a\r\nb\r\nc', 'A\r\nb\r\nc', 'a\r\nb\r\nC').content).toBe('A\r\nb\r\nC');
  });

  it('numbers several blocks on the written content', () => {
    const base = ['1', '2', '3', '4', '5', '6', '7'].map((l) => `${l}\n`).join('');
    const local = base.replace('2\n', 'L2\n').replace('6\n', 'L6a\nL6b\n');
    const remote = base.replace('2\n', 'R2\n').replace('6\n', 'R6\n');
    const result = merge(base, local, remote);
    expect(result.conflicts).toEqual([
      { start: 2, end: 6 },
      { start: 10, end: 15 },
    ]);
    expect(findMarkerBlocks(utf8(result.content))).toEqual(result.conflicts);
  });
});

describe('findMarkerBlocks', () => {
  const blocks = (content: string) => findMarkerBlocks(utf8(content));

  it('finds complete blocks with LF or CRLF, and at the end of content', () => {
    expect(blocks('x\n<<<<<<< local\na\n=======\nb\n>>>>>>> remote\ny\n')).toEqual([
      { start: 2, end: 6 },
    ]);
    expect(blocks('<<<<<<< local\r\n=======\r\n>>>>>>> remote\r\n')).toEqual([
      { start: 1, end: 3 },
    ]);
    expect(blocks('<<<<<<< local\n=======\n>>>>>>> remote')).toEqual([{ start: 1, end: 3 }]);
  });

  it('ignores incomplete blocks, altered marker lines and closers without a separator', () => {
    expect(blocks('<<<<<<< local\na\n>>>>>>> remote\n')).toEqual([]);
    expect(blocks('<<<<<<< local\n=======\n')).toEqual([]);
    expect(blocks('<<<<<<< locals\n=======\n>>>>>>> remote\n')).toEqual([]);
    expect(blocks(' <<<<<<< local\n=======\n>>>>>>> remote\n')).toEqual([]);
    expect(blocks('<<<<<<< local\n======= \n>>>>>>> remote\n')).toEqual([]);
    expect(blocks('<<<<<<< local\n=======\n>>>>>>> remote \n')).toEqual([]);
    expect(blocks('<<<<<<< local\r\r\n=======\n>>>>>>> remote\n')).toEqual([]);
    expect(blocks('=======\n>>>>>>> remote\n')).toEqual([]);
  });

  it('does not nest: a further opener before the separator is content', () => {
    expect(blocks('<<<<<<< local\n<<<<<<< local\n=======\n>>>>>>> remote\n')).toEqual([
      { start: 1, end: 4 },
    ]);
    expect(blocks('<<<<<<< local\na\n>>>>>>> remote\n=======\n>>>>>>> remote\n')).toEqual([
      { start: 1, end: 5 },
    ]);
  });

  it('finds consecutive blocks', () => {
    const one = '<<<<<<< local\n=======\n>>>>>>> remote\n';
    expect(blocks(one + one)).toEqual([
      { start: 1, end: 3 },
      { start: 4, end: 6 },
    ]);
  });
});

describe('lineDiffStat', () => {
  const stat = (a: string, b: string) => lineDiffStat(utf8(a), utf8(b));
  const lines = (count: number, tag: string) =>
    Array.from({ length: count }, (_, i) => `${tag} ${i}\n`).join('');

  it('counts a near-total rewrite of a huge file (past the exact-search bound) line by line', () => {
    // 100,000 lines rewritten, 1,000 kept in place: exact Myers would need ~10^10 steps.
    const kept = lines(1_000, 'kept');
    expect(stat(kept + lines(100_000, 'old'), kept + lines(100_000, 'new'))).toEqual({
      insertions: 100_000,
      deletions: 100_000,
    });
    expect(stat(lines(60_000, 'a'), lines(50_000, 'b') + lines(60_000, 'a'))).toEqual({
      insertions: 50_000,
      deletions: 0,
    });
  });

  it('counts a minimal line diff', () => {
    expect(stat('', '')).toEqual({ insertions: 0, deletions: 0 });
    expect(stat('', 'a\nb')).toEqual({ insertions: 2, deletions: 0 });
    expect(stat('a\nb\n', '')).toEqual({ insertions: 0, deletions: 2 });
    expect(stat('a\nb\nc\n', 'a\nB\nc\nd\n')).toEqual({ insertions: 2, deletions: 1 });
    expect(stat('a\nb\nc\nd\n', 'b\nc\nd\ne\n')).toEqual({ insertions: 1, deletions: 1 });
  });

  it('ignores one trailing CR and a missing final LF for comparison', () => {
    expect(stat('a\r\nb\r\n', 'a\nb\n')).toEqual({ insertions: 0, deletions: 0 });
    expect(stat('a\nb', 'a\nb\n')).toEqual({ insertions: 0, deletions: 0 });
    expect(stat('a\r\r\n', 'a\n')).toEqual({ insertions: 1, deletions: 1 });
  });
});
