import { describe, expect, it } from 'vitest';
import {
  buildError,
  buildSuccess,
  candidText,
  createScrubber,
  DomainError,
  successText,
} from '../src';

const noSets = { readOnly: [], writable: [] };
const scrubber = createScrubber({ env: {} });

describe('the page’s examples, byte for byte', () => {
  it('builds the success object with the page’s field order, files sorted by path bytes', () => {
    const result = buildSuccess({
      path: '/tmp/slivingdoc-7f3a1c/notebook',
      generation: 18,
      files: [
        { path: 'notes/a.md', insertions: 1, deletions: 1 },
        { path: 'notes/c.md', insertions: 2, deletions: 0 },
        { path: 'archive/old.md', insertions: 0, deletions: 3 },
      ],
      sets: { readOnly: ['docs', 'faq.md'], writable: [] },
    });
    expect(JSON.stringify(result, null, 2)).toBe(`{
  "code": "OK",
  "path": "/tmp/slivingdoc-7f3a1c/notebook",
  "generation": 18,
  "filesChanged": 3,
  "insertions": 3,
  "deletions": 4,
  "files": [
    {
      "path": "archive/old.md",
      "insertions": 0,
      "deletions": 3
    },
    {
      "path": "notes/a.md",
      "insertions": 1,
      "deletions": 1
    },
    {
      "path": "notes/c.md",
      "insertions": 2,
      "deletions": 0
    }
  ],
  "readOnly": [
    "docs",
    "faq.md"
  ],
  "writable": []
}`);
  });

  it('renders the success text item as the bare path without sets', () => {
    expect(successText('/tmp/slivingdoc-7f3a1c/notebook', noSets)).toBe(
      '/tmp/slivingdoc-7f3a1c/notebook',
    );
  });

  const conflict = () =>
    buildError(
      new DomainError({
        code: 'CONTENT_CONFLICT',
        reason: 'MERGE_CONFLICT',
        message: 'Resolve the conflict blocks before notes_commit.',
        files: [
          { path: 'notes/today.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 12, end: 18 }] },
        ],
      }),
      { diagnosticId: '0011223344556677', sets: noSets, scrubber },
    );

  it('builds the CONTENT_CONFLICT error object with the page’s field order', () => {
    expect(JSON.stringify(conflict())).toBe(
      JSON.stringify(
        JSON.parse(`{
  "code": "CONTENT_CONFLICT",
  "reason": "MERGE_CONFLICT",
  "action": "EDIT_FILES",
  "diagnosticId": "0011223344556677",
  "retryable": false,
  "message": "Resolve the conflict blocks before notes_commit.",
  "files": [
    {
      "path": "notes/today.md",
      "reason": "TEXT_CONFLICT",
      "ranges": [{ "start": 12, "end": 18 }]
    }
  ],
  "readOnly": [],
  "writable": []
}`),
      ),
    );
    expect(Object.keys(conflict())).toEqual([
      'code',
      'reason',
      'action',
      'diagnosticId',
      'retryable',
      'message',
      'files',
      'readOnly',
      'writable',
    ]);
  });

  it('renders the page’s candid text item exactly', () => {
    expect(candidText(conflict(), noSets)).toBe(
      [
        'CONTENT_CONFLICT · MERGE_CONFLICT',
        'Resolve the conflict blocks before notes_commit.',
        'file: notes/today.md · TEXT_CONFLICT · lines 12-18',
        'action: EDIT_FILES',
        'retryable: false',
        'diagnosticId: 0011223344556677',
      ].join('\n'),
    );
  });
});
