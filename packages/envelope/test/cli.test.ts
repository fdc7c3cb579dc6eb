import { describe, expect, it } from 'vitest';
import {
  buildError,
  buildSuccess,
  candidText,
  createScrubber,
  DomainError,
  diffstatTrailer,
  renderCliError,
  renderCliSuccess,
  useColor,
} from '../src';

const none = { readOnly: [], writable: [] };

describe('renderCliSuccess', () => {
  it('prints contract §12’s example exactly', () => {
    const result = buildSuccess({
      path: '/abs/notebook/dir',
      generation: 18,
      files: [
        { path: 'notes/c.md', insertions: 2, deletions: 0 },
        { path: 'notes/a.md', insertions: 1, deletions: 1 },
        { path: 'archive/old.md', insertions: 0, deletions: 3 },
      ],
      sets: none,
    });
    expect(renderCliSuccess(result, { color: false })).toBe(
      `OK  generation 18  /abs/notebook/dir
  archive/old.md  -3
  notes/a.md  +1 -1
  notes/c.md  +2
3 files changed, 3 insertions(+), 4 deletions(-)
`,
    );
  });

  it('prints +0 for a 0/0 entry, the set suffix on the first line, and 0 files changed for none', () => {
    const sets = { readOnly: ['docs'], writable: [] };
    const empty = buildSuccess({
      path: '/n',
      generation: 2,
      files: [{ path: 'e.md', insertions: 0, deletions: 0 }],
      sets,
    });
    expect(renderCliSuccess(empty, { color: false })).toBe(
      'OK  generation 2  /n (read-only: docs)\n  e.md  +0\n1 file changed, 0 insertions(+), 0 deletions(-)\n',
    );
    const noop = buildSuccess({ path: '/n', generation: 2, files: [], sets: none });
    expect(renderCliSuccess(noop, { color: false })).toBe(
      'OK  generation 2  /n\n0 files changed\n',
    );
  });

  it('colours only when asked', () => {
    const result = buildSuccess({
      path: '/n',
      generation: 1,
      files: [{ path: 'a', insertions: 1, deletions: 2 }],
      sets: none,
    });
    const coloured = renderCliSuccess(result, { color: true });
    expect(coloured).toContain('\x1b[32mOK\x1b[0m');
    expect(coloured).toContain('\x1b[31m-2\x1b[0m');
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(
      renderCliSuccess(result, { color: false }),
    );
  });
});

describe('diffstatTrailer', () => {
  it('follows git’s wording and singular/plural', () => {
    expect(diffstatTrailer({ filesChanged: 1, insertions: 1, deletions: 0 })).toBe(
      '1 file changed, 1 insertion(+)',
    );
    expect(diffstatTrailer({ filesChanged: 2, insertions: 0, deletions: 1 })).toBe(
      '2 files changed, 1 deletion(-)',
    );
    expect(diffstatTrailer({ filesChanged: 2, insertions: 5, deletions: 1 })).toBe(
      '2 files changed, 5 insertions(+), 1 deletion(-)',
    );
    expect(diffstatTrailer({ filesChanged: 0, insertions: 0, deletions: 0 })).toBe(
      '0 files changed',
    );
  });
});

describe('renderCliError', () => {
  const error = buildError(
    new DomainError({ code: 'PATH_BUSY', reason: 'LOCK_TIMEOUT', message: 'Busy.' }),
    {
      diagnosticId: '0123456789abcdef',
      sets: { readOnly: [], writable: ['notes'] },
      scrubber: createScrubber({ env: {} }),
    },
  );

  it('prints the candid text with the result’s own sets, ending in LF', () => {
    expect(renderCliError(error, { color: false })).toBe(
      `${candidText(error, { readOnly: [], writable: ['notes'] })}\n`,
    );
    expect(renderCliError(error, { color: false })).toContain('\nwritable: notes\n');
  });

  it('colours the headline only when asked', () => {
    const coloured = renderCliError(error, { color: true });
    expect(coloured.startsWith('\x1b[1m\x1b[31mPATH_BUSY · LOCK_TIMEOUT')).toBe(true);
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(renderCliError(error, { color: false }));
  });
});

describe('useColor', () => {
  it('is on only for a TTY without a non-empty NO_COLOR', () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({}, {})).toBe(false);
  });
});
