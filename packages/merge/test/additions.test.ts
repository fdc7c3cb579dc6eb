import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findMarkerBlocks, type MergeAdditions, mergeText } from '../src/index';
import { text, utf8 } from './git-oracle';

const merge = (base: string, local: string, remote: string, additions?: MergeAdditions) => {
  const result = mergeText(utf8(base), utf8(local), utf8(remote), { additions });
  return { content: text(result.content), conflicts: result.conflicts };
};
const clean = (content: string) => ({ content, conflicts: [] });

describe('concurrent additions are kept (contract §6, --merge-additions=keep)', () => {
  it('append/append: R’s line, then L’s, no markers', () => {
    expect(merge('# log\na\n', '# log\na\nL\n', '# log\na\nR\n')).toEqual(
      clean('# log\na\nR\nL\n'),
    );
  });

  it('insertions under the same heading keep both, in the middle of a file', () => {
    const base = '# Ideas\n- one\n# Done\n- old\n';
    expect(
      merge(
        base,
        '# Ideas\n- one\n- local idea\n# Done\n- old\n',
        '# Ideas\n- one\n- remote idea\n- another\n# Done\n- old\n',
      ),
    ).toEqual(clean('# Ideas\n- one\n- remote idea\n- another\n- local idea\n# Done\n- old\n'));
  });

  it('the same line added by both sides is kept once, also when only the line ending differs', () => {
    expect(merge('a\n', 'a\nsame\n', 'a\nsame\n')).toEqual(clean('a\nsame\n'));
    expect(merge('a\n', 'a\nsame\n', 'a\nsame\r\n')).toEqual(clean('a\nsame\r\n'));
    expect(merge('a\n', 'a\nsame\nL\n', 'a\nsame')).toEqual(clean('a\nsame\nL\n'));
  });

  it('an insertion that begins with the other side’s insertion never duplicates it', () => {
    expect(merge('a\n', 'a\nx\ny\n', 'a\nx\n')).toEqual(clean('a\nx\ny\n'));
    expect(merge('a\n', 'a\nx\n', 'a\nx\ny\n')).toEqual(clean('a\nx\ny\n'));
    expect(merge('a\n', 'a\nx\nL\n', 'a\nx\nR\n')).toEqual(clean('a\nx\nR\nL\n'));
  });

  it('only the leading run is shared: a common later line is kept on both sides', () => {
    expect(merge('a\n', 'a\nL\nend\n', 'a\nR\nend\n')).toEqual(clean('a\nR\nend\nL\nend\n'));
  });

  it('a side without a final line ending gets the file’s line ending before the other side', () => {
    expect(merge('a\n', 'a\nL\n', 'a\nR')).toEqual(clean('a\nR\nL\n'));
    expect(merge('a\n', 'a\nL', 'a\nR')).toEqual(clean('a\nR\nL'));
    expect(merge('a\n', 'a\nL', 'a\nR\n')).toEqual(clean('a\nR\nL'));
    // The file's line ending is the marker rule's: L's first line ending, else R's, else LF.
    expect(merge('a\r\n', 'a\r\nL\r\n', 'a\r\nR')).toEqual(clean('a\r\nR\r\nL\r\n'));
    expect(merge('', 'L', 'R')).toEqual(clean('R\nL'));
    expect(merge('', 'L', 'R\r\nS')).toEqual(clean('R\r\nS\r\nL'));
  });

  it('add/add over an empty base: R’s content, then L’s, the common start once', () => {
    expect(merge('', '# t\nL\n', '# t\nR\n')).toEqual(clean('# t\nR\nL\n'));
    expect(merge('', '', 'r\n')).toEqual(clean('r\n'));
  });

  it('an insertion next to a line the other side changed or removed conflicts as today', () => {
    const cases: [string, string, string][] = [
      ['a\nb\n', 'a\nB\n', 'a\nb\nR\n'], // R appends after the line L changed
      ['a\nb\nc\n', 'a\nB\nc\n', 'a\nR\nb\nc\n'], // R inserts before it
      ['a\nb\nc\n', 'a\nc\n', 'a\nb\nR\nc\n'], // L removed the line R inserts after
      ['a\nb', 'a\nb\nL\n', 'a\nb\nR\n'], // both append to a last line without ending: both change it
      ['a\nb\n', 'a\nL\nb\nx\n', 'a\nR\nb\ny\n'], // a second region where both changed nothing of A
    ];
    for (const [base, local, remote] of cases.slice(0, 4)) {
      const kept = merge(base, local, remote);
      expect(kept.conflicts.length).toBeGreaterThan(0);
      expect(kept).toEqual(merge(base, local, remote, 'conflict'));
    }
    const [base, local, remote] = cases[4] as [string, string, string];
    expect(merge(base, local, remote)).toEqual(clean('a\nR\nL\nb\ny\nx\n'));
  });

  it('`conflict` writes markers for every overlapping insertion (git’s rule)', () => {
    expect(merge('a\n', 'a\nL\n', 'a\nR\n', 'conflict')).toEqual({
      content: 'a\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\n',
      conflicts: [{ start: 2, end: 6 }],
    });
  });
});

/** Base lines and inserted lines come from disjoint pools, so the diff has one alignment. */
const BASE_LINES = ['a', 'b', 'c', 'd', 'e'];
const NEW_LINES = ['x', 'y', 'z', 'x'];
const eolArb = fc.constantFrom('\n', '\n', '\r\n');
const lineArb = (pool: string[]) =>
  fc.tuple(fc.constantFrom(...pool), eolArb).map(([t, eol]) => t + eol);
/** Distinct base lines: a removal or change then has exactly one place in the diff. */
const baseArb = (minLength: number) =>
  fc
    .tuple(fc.uniqueArray(fc.constantFrom(...BASE_LINES), { minLength }), fc.array(eolArb))
    .map(([texts, eols]) => texts.map((t, i) => t + (eols[i] ?? '\n')));
const insertArb = fc.array(lineArb(NEW_LINES), { minLength: 1, maxLength: 5 });
const textOf = (line: string) => line.replace(/\r?\n$/, '');
const textsOf = (content: string) => (content.match(/[^\n]*\n|[^\n]+$/g) ?? []).map(textOf);

describe('properties of concurrent additions (fast-check)', () => {
  it('when both sides only insert at one place: A’s lines in order, every inserted line, the shared leading run once, never a marker', () => {
    const scenario = fc.record({
      base: baseArb(0),
      at: fc.nat(),
      local: insertArb,
      remote: insertArb,
      // Force the interesting shapes: one side a prefix of the other, or equal starts.
      shape: fc.constantFrom('free', 'local-prefix', 'remote-prefix', 'same-start'),
      unterminated: fc.constantFrom('none', 'local', 'remote', 'both'),
    });
    fc.assert(
      fc.property(scenario, ({ base, at, local, remote, shape, unterminated }) => {
        const p = at % (base.length + 1);
        let [l, r] = [local, remote];
        if (shape === 'local-prefix') l = r.slice(0, Math.max(1, r.length - 1));
        if (shape === 'remote-prefix') r = l.slice(0, Math.max(1, l.length - 1));
        if (shape === 'same-start') r = [l[0] as string, ...r];
        // A missing final line ending only exists at the end of the file.
        const strip = (lines: string[], side: string) =>
          p === base.length && (unterminated === side || unterminated === 'both')
            ? [...lines.slice(0, -1), textOf(lines.at(-1) as string)]
            : lines;
        l = strip(l, 'local');
        r = strip(r, 'remote');
        const join = (inserted: string[]) =>
          [...base.slice(0, p), ...inserted, ...base.slice(p)].join('');
        const result = merge(base.join(''), join(l), join(r));
        let shared = 0;
        while (
          shared < l.length &&
          shared < r.length &&
          textOf(l[shared] as string) === textOf(r[shared] as string)
        )
          shared++;
        const expected = [...base.slice(0, p), ...r, ...l.slice(shared), ...base.slice(p)].map(
          textOf,
        );
        expect(result.conflicts).toEqual([]);
        expect(findMarkerBlocks(utf8(result.content))).toEqual([]);
        expect(textsOf(result.content)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  }, 120_000);

  it('when either side changes or removes a line of A next to the other side’s insertion, today’s markers appear', () => {
    const scenario = fc.record({
      base: baseArb(1),
      at: fc.nat(),
      edit: fc.constantFrom('change', 'remove'),
      // Where the other side inserts: just before or just after the edited line.
      after: fc.boolean(),
      inserted: insertArb,
      editor: fc.constantFrom('local', 'remote'),
    });
    fc.assert(
      fc.property(scenario, ({ base, at, edit, after, inserted, editor }) => {
        const p = at % base.length;
        const edited = [...base];
        edited.splice(p, 1, ...(edit === 'change' ? ['changed\n'] : []));
        const inserting = [...base];
        inserting.splice(after ? p + 1 : p, 0, ...inserted);
        const [local, remote] = editor === 'local' ? [edited, inserting] : [inserting, edited];
        const args = [base.join(''), local.join(''), remote.join('')] as const;
        const kept = merge(...args);
        expect(kept.conflicts.length).toBeGreaterThan(0);
        expect(kept).toEqual(merge(...args, 'conflict'));
        expect(findMarkerBlocks(utf8(kept.content))).toEqual(kept.conflicts);
      }),
      { numRuns: 500 },
    );
  }, 120_000);
});
