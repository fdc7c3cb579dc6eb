import { describe, expect, it } from 'vitest';
import {
  buildError,
  CATALOGUE,
  candidText,
  createScrubber,
  DomainError,
  type DomainErrorInit,
  type ErrorCode,
  pathSetSentences,
  successText,
  withPathSetSentences,
} from '../src';

const none = { readOnly: [], writable: [] };
const writableOnly = { readOnly: [], writable: ['notes', 'todo.md'] };
const readOnlyOnly = { readOnly: ['docs', 'faq.md'], writable: [] };
const both = { readOnly: ['notes/archive'], writable: ['notes'] };
const scrubber = createScrubber({ env: {} });
const id = '0123456789abcdef';

describe('successText', () => {
  it('appends the contract §2 suffix for each combination of sets', () => {
    expect(successText('/w/nb', none)).toBe('/w/nb');
    expect(successText('/w/nb', writableOnly)).toBe('/w/nb (writable: notes, todo.md)');
    expect(successText('/w/nb', readOnlyOnly)).toBe('/w/nb (read-only: docs, faq.md)');
    expect(successText('/w/nb', both)).toBe(
      '/w/nb (writable: notes; read-only: notes/archive; longest match decides)',
    );
  });
});

describe('path-set sentences', () => {
  it('are empty without sets, so the base text is unchanged', () => {
    expect(pathSetSentences(none)).toBe('');
    expect(withPathSetSentences('Base.', none)).toBe('Base.');
  });

  it('name the entries and the consequence, per contract §2', () => {
    expect(withPathSetSentences('Base.', writableOnly)).toBe(
      'Base. Writable paths: notes, todo.md. notes_commit refuses any change elsewhere, resets those files, and reports READ_ONLY_PATH; write only under them.',
    );
    expect(withPathSetSentences('Base.', readOnlyOnly)).toBe(
      'Base. Read-only paths: docs, faq.md. notes_commit refuses any change there, resets those files, and reports READ_ONLY_PATH; write elsewhere.',
    );
    expect(withPathSetSentences('Base.', both)).toBe(
      'Base. Writable paths: notes. notes_commit refuses any change elsewhere, resets those files, and reports READ_ONLY_PATH; write only under them. Read-only paths: notes/archive. notes_commit refuses any change there, resets those files, and reports READ_ONLY_PATH; where the two sets nest, the longest matching entry decides.',
    );
  });
});

/** One representative error per code, with the candid text it must render to. */
const PER_CODE: { [C in ErrorCode]: { init: DomainErrorInit<C>; text: string[] } } = {
  INVALID_REQUEST: {
    init: { code: 'INVALID_REQUEST', reason: 'NOT_PULLED', message: 'Pull this directory first.' },
    text: [
      'INVALID_REQUEST · NOT_PULLED',
      'Pull this directory first.',
      'action: PULL_FIRST',
      'retryable: false',
    ],
  },
  INVALID_CONTENT: {
    init: {
      code: 'INVALID_CONTENT',
      reason: 'UNSUPPORTED_FILES',
      message: 'Remove or fix the listed files.',
      files: [
        { path: 'link.md', reason: 'SYMLINK', ranges: [] },
        { path: 'bin.dat', reason: 'NOT_UTF8', ranges: [] },
      ],
    },
    text: [
      'INVALID_CONTENT · UNSUPPORTED_FILES',
      'Remove or fix the listed files.',
      'file: bin.dat · NOT_UTF8',
      'file: link.md · SYMLINK',
      'action: EDIT_FILES',
      'retryable: false',
    ],
  },
  CONTENT_CONFLICT: {
    init: {
      code: 'CONTENT_CONFLICT',
      reason: 'UNRESOLVED_MARKERS',
      message: 'Remove the marker blocks.',
      files: [
        {
          path: 'a.md',
          reason: 'MARKER_BLOCK',
          ranges: [
            { start: 30, end: 34 },
            { start: 1, end: 5 },
          ],
        },
      ],
    },
    text: [
      'CONTENT_CONFLICT · UNRESOLVED_MARKERS',
      'Remove the marker blocks.',
      'file: a.md · MARKER_BLOCK · lines 1-5, 30-34',
      'action: EDIT_FILES',
      'retryable: false',
    ],
  },
  READ_ONLY_PATH: {
    init: {
      code: 'READ_ONLY_PATH',
      reason: 'CHANGE_OUTSIDE_WRITABLE',
      message: 'Nothing was published; the listed files were reset.',
      files: [{ path: 'docs/x.md', reason: 'READ_ONLY_PATH', ranges: [] }],
    },
    text: [
      'READ_ONLY_PATH · CHANGE_OUTSIDE_WRITABLE',
      'Nothing was published; the listed files were reset.',
      'file: docs/x.md · READ_ONLY_PATH',
      'action: WRITE_ELSEWHERE',
      'retryable: false',
    ],
  },
  READ_ONLY_SESSION: {
    init: {
      code: 'READ_ONLY_SESSION',
      reason: 'TOKEN_READ_ONLY',
      message: 'This session may only read.',
    },
    text: [
      'READ_ONLY_SESSION · TOKEN_READ_ONLY',
      'This session may only read.',
      'action: ASK_FOR_WRITE_ACCESS',
      'retryable: false',
    ],
  },
  REVIEW: {
    init: {
      code: 'REVIEW',
      reason: 'PROPOSAL_NOT_FOUND',
      message: 'No proposal 0123456789abcdef-1 is stored. Nothing was changed.',
    },
    text: [
      'REVIEW · PROPOSAL_NOT_FOUND',
      'No proposal 0123456789abcdef-1 is stored. Nothing was changed.',
      'action: FIX_ARGUMENTS',
      'retryable: false',
    ],
  },
  REMOTE_BUSY: {
    init: { code: 'REMOTE_BUSY', reason: 'RETRIES_EXHAUSTED', message: 'Others kept winning.' },
    text: [
      'REMOTE_BUSY · RETRIES_EXHAUSTED',
      'Others kept winning.',
      'action: RETRY',
      'retryable: true',
    ],
  },
  PATH_BUSY: {
    init: { code: 'PATH_BUSY', reason: 'LOCK_TIMEOUT', message: 'Busy.' },
    text: ['PATH_BUSY · LOCK_TIMEOUT', 'Busy.', 'action: RETRY', 'retryable: true'],
  },
  STORAGE_FAILURE: {
    init: { code: 'STORAGE_FAILURE', reason: 'PUBLICATION_UNPROVEN', message: 'Unknown outcome.' },
    text: [
      'STORAGE_FAILURE · PUBLICATION_UNPROVEN',
      'Unknown outcome.',
      'action: PULL_TO_VERIFY',
      'retryable: true',
    ],
  },
  STORAGE_INTEGRITY: {
    init: { code: 'STORAGE_INTEGRITY', reason: 'CHECKSUM_MISMATCH', message: 'A pack is damaged.' },
    text: [
      'STORAGE_INTEGRITY · CHECKSUM_MISMATCH',
      'A pack is damaged.',
      'action: CONTACT_OPERATOR',
      'retryable: false',
    ],
  },
  RECOVERY_FAILURE: {
    init: {
      code: 'RECOVERY_FAILURE',
      reason: 'UNEXPECTED_FAILURE',
      message: 'The directory was repaired.',
      recovery: { stage: 'publish', remoteAccepted: 'unknown', resynchronized: false },
    },
    text: [
      'RECOVERY_FAILURE · UNEXPECTED_FAILURE',
      'The directory was repaired.',
      'action: RETRY',
      'retryable: true',
      `diagnosticId: ${id}`,
      'recovery: stage publish · remoteAccepted unknown · resynchronized false',
    ],
  },
  ENGINE_FAILED: {
    init: {
      code: 'ENGINE_FAILED',
      reason: 'PRIVATE_STATE_UNAVAILABLE',
      message: 'Private state failed.',
      detail: 'disk full',
    },
    text: [
      'ENGINE_FAILED · PRIVATE_STATE_UNAVAILABLE',
      'Private state failed.',
      'detail: disk full',
      'action: CONTACT_OPERATOR',
      'retryable: false',
    ],
  },
};

describe('candidText, one rendering per code', () => {
  it('covers every code of the catalogue', () => {
    expect(Object.keys(PER_CODE).sort()).toEqual(Object.keys(CATALOGUE).sort());
  });

  it.each(Object.entries(PER_CODE))(
    'renders %s in the contract §2 layout',
    (_code, { init, text }) => {
      const error = buildError(new DomainError(init as DomainErrorInit), {
        diagnosticId: id,
        sets: none,
        scrubber,
      });
      const expected = text.includes(`diagnosticId: ${id}`)
        ? text
        : [...text, `diagnosticId: ${id}`];
      expect(candidText(error, none)).toBe(expected.join('\n'));
    },
  );

  it('ends with writable and read-only lines only for configured sets', () => {
    const error = buildError(new DomainError(PER_CODE.PATH_BUSY.init), {
      diagnosticId: id,
      sets: both,
      scrubber,
    });
    expect(candidText(error, both).split('\n').slice(-3)).toEqual([
      `diagnosticId: ${id}`,
      'writable: notes',
      'read-only: notes/archive',
    ]);
    expect(candidText(error, readOnlyOnly).split('\n').slice(-2)).toEqual([
      `diagnosticId: ${id}`,
      'read-only: docs, faq.md',
    ]);
    expect(candidText(error, none)).not.toMatch(/writable|read-only/);
  });

  it('omits detail when ENGINE_FAILED has none', () => {
    const error = buildError(
      new DomainError({ code: 'ENGINE_FAILED', reason: 'INTERNAL_ERROR', message: 'Failed.' }),
      { diagnosticId: id, sets: none, scrubber },
    );
    expect(candidText(error, none)).toBe(
      [
        'ENGINE_FAILED · INTERNAL_ERROR',
        'Failed.',
        'action: RETRY',
        'retryable: true',
        `diagnosticId: ${id}`,
      ].join('\n'),
    );
  });
});
