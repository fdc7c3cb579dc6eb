import { describe, expect, it } from 'vitest';
import { buildError, buildSuccess, createScrubber, DomainError, normaliseRanges } from '../src';

const sets = { readOnly: ['docs'], writable: ['notes'] };
const scrubber = createScrubber({ env: {} });
const id = 'abcdef0123456789';

describe('buildSuccess', () => {
  it('sorts files by UTF-8 bytes, not UTF-16 code units', () => {
    // U+FF5E (3 UTF-8 bytes EF BD 9E) sorts before U+1F600 (F0 9F 98 80) in UTF-8, but after
    // it in UTF-16 (0xFF5E > 0xD83D).
    const result = buildSuccess({
      path: '/n',
      generation: 1,
      files: [
        { path: '😀.md', insertions: 1, deletions: 0 },
        { path: '～.md', insertions: 0, deletions: 2 },
        { path: 'B.md', insertions: 0, deletions: 0 },
        { path: 'a.md', insertions: 3, deletions: 0 },
      ],
      sets,
    });
    expect(result.files.map((f) => f.path)).toEqual(['B.md', 'a.md', '～.md', '😀.md']);
    expect([result.filesChanged, result.insertions, result.deletions]).toEqual([4, 4, 2]);
  });

  it('reports an empty list and zero totals for a no-op, with both arrays present', () => {
    expect(
      buildSuccess({ path: '/n', generation: 0, files: [], sets: { readOnly: [], writable: [] } }),
    ).toEqual({
      code: 'OK',
      path: '/n',
      generation: 0,
      filesChanged: 0,
      insertions: 0,
      deletions: 0,
      files: [],
      readOnly: [],
      writable: [],
    });
  });

  it('does not alias the configured sets', () => {
    const result = buildSuccess({ path: '/n', generation: 1, files: [], sets });
    result.readOnly.push('x');
    expect(sets.readOnly).toEqual(['docs']);
  });

  it('refuses negative or fractional counts', () => {
    expect(() => buildSuccess({ path: '/n', generation: -1, files: [], sets })).toThrow(RangeError);
    expect(() =>
      buildSuccess({
        path: '/n',
        generation: 1,
        files: [{ path: 'a', insertions: 0.5, deletions: 0 }],
        sets,
      }),
    ).toThrow(RangeError);
  });
});

describe('normaliseRanges', () => {
  it('orders ranges and merges overlapping ones, keeping adjacent blocks apart', () => {
    expect(
      normaliseRanges([
        { start: 20, end: 25 },
        { start: 1, end: 3 },
        { start: 4, end: 6 },
        { start: 22, end: 30 },
        { start: 5, end: 5 },
      ]),
    ).toEqual([
      { start: 1, end: 3 },
      { start: 4, end: 6 },
      { start: 20, end: 30 },
    ]);
  });

  it('refuses a range that is not one-based and inclusive', () => {
    expect(() => normaliseRanges([{ start: 0, end: 2 }])).toThrow(RangeError);
    expect(() => normaliseRanges([{ start: 5, end: 4 }])).toThrow(RangeError);
  });
});

describe('buildError', () => {
  it('takes action and retryable from the catalogue and sorts files and their ranges', () => {
    const result = buildError(
      new DomainError({
        code: 'CONTENT_CONFLICT',
        reason: 'UNRESOLVED_MARKERS',
        message: 'm',
        files: [
          {
            path: 'z.md',
            reason: 'MARKER_BLOCK',
            ranges: [
              { start: 9, end: 12 },
              { start: 1, end: 4 },
            ],
          },
          { path: 'a.md', reason: 'MARKER_BLOCK', ranges: [] },
        ],
      }),
      { diagnosticId: id, sets, scrubber },
    );
    expect(result).toEqual({
      code: 'CONTENT_CONFLICT',
      reason: 'UNRESOLVED_MARKERS',
      action: 'EDIT_FILES',
      diagnosticId: id,
      retryable: false,
      message: 'm',
      files: [
        { path: 'a.md', reason: 'MARKER_BLOCK', ranges: [] },
        {
          path: 'z.md',
          reason: 'MARKER_BLOCK',
          ranges: [
            { start: 1, end: 4 },
            { start: 9, end: 12 },
          ],
        },
      ],
      readOnly: ['docs'],
      writable: ['notes'],
    });
  });

  it('places detail after message and recovery after files', () => {
    const engine = buildError(
      new DomainError({
        code: 'ENGINE_FAILED',
        reason: 'LOCAL_WRITE_FAILED',
        message: 'm',
        detail: 'disk full',
      }),
      { diagnosticId: id, sets, scrubber },
    );
    expect(Object.keys(engine)).toEqual([
      'code',
      'reason',
      'action',
      'diagnosticId',
      'retryable',
      'message',
      'detail',
      'files',
      'readOnly',
      'writable',
    ]);
    const recovery = buildError(
      new DomainError({
        code: 'RECOVERY_FAILURE',
        reason: 'UNEXPECTED_FAILURE',
        message: 'm',
        recovery: { stage: 'materialize', remoteAccepted: 'yes', resynchronized: true },
      }),
      { diagnosticId: id, sets, scrubber },
    );
    expect(Object.keys(recovery)).toEqual([
      'code',
      'reason',
      'action',
      'diagnosticId',
      'retryable',
      'message',
      'files',
      'recovery',
      'readOnly',
      'writable',
    ]);
    expect(recovery.retryable).toBe(true);
  });

  it('scrubs the message but never a file path', () => {
    const hex = 'a'.repeat(40);
    const result = buildError(
      new DomainError({
        code: 'INVALID_CONTENT',
        reason: 'UNSUPPORTED_FILES',
        message: `object ${hex} is broken`,
        files: [{ path: `notes/${hex}.md`, reason: 'NOT_UTF8', ranges: [] }],
      }),
      { diagnosticId: id, sets, scrubber },
    );
    expect(result.message).toBe('object [redacted] is broken');
    expect(result.files[0]?.path).toBe(`notes/${hex}.md`);
  });

  it('refuses a diagnosticId that is not 16 lowercase hex characters', () => {
    const err = new DomainError({ code: 'PATH_BUSY', reason: 'LOCK_TIMEOUT', message: 'm' });
    for (const bad of ['ABCDEF0123456789', 'abc', `${id}0`])
      expect(() => buildError(err, { diagnosticId: bad, sets, scrubber })).toThrow(RangeError);
  });
});
