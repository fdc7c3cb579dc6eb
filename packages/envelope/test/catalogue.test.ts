import { describe, expect, it } from 'vitest';
import {
  ACTIONS,
  CATALOGUE,
  catalogueEntries,
  DomainError,
  ENGINE_DETAILS,
  FILE_REASONS,
  isDomainError,
  reasonSpec,
} from '../src';

// contract §3's minimum catalogue, transcribed: code, reason, action, retryable; plus the two
// reasons of the CLI's revert, which contract §3 lets us add.
const CONTRACT_TABLE = `
INVALID_REQUEST INVALID_ARGUMENTS FIX_ARGUMENTS false
INVALID_REQUEST PATH_INVALID FIX_ARGUMENTS false
INVALID_REQUEST PATH_OUTSIDE_ROOT CHOOSE_PATH false
INVALID_REQUEST PATH_OUTSIDE_TOKEN_DIR CHOOSE_PATH false
INVALID_REQUEST PATH_NOT_DIRECTORY CHOOSE_PATH false
INVALID_REQUEST PATH_SYMLINK CHOOSE_PATH false
INVALID_REQUEST NESTED_NOTEBOOK CHOOSE_PATH false
INVALID_REQUEST MESSAGE_INVALID FIX_ARGUMENTS false
INVALID_REQUEST NOT_PULLED PULL_FIRST false
INVALID_REQUEST UNPUBLISHED_EDITS COMMIT_FIRST false
INVALID_REQUEST GENERATION_NOT_RETAINED FIX_ARGUMENTS false
INVALID_REQUEST FILE_NOT_FOUND FIX_ARGUMENTS false
INVALID_CONTENT UNSUPPORTED_FILES EDIT_FILES false
CONTENT_CONFLICT MERGE_CONFLICT EDIT_FILES false
CONTENT_CONFLICT UNRESOLVED_MARKERS EDIT_FILES false
READ_ONLY_PATH CHANGE_OUTSIDE_WRITABLE WRITE_ELSEWHERE false
READ_ONLY_SESSION TOKEN_READ_ONLY ASK_FOR_WRITE_ACCESS false
READ_ONLY_SESSION STORE_READ_ONLY ASK_FOR_STORE_WRITE_ACCESS false
REVIEW SETTING_INVALID CONTACT_OPERATOR false
REVIEW TOO_MANY_PROPOSALS WAIT_FOR_REVIEW false
REVIEW PROPOSAL_BEING_APPROVED RETRY true
REVIEW PROPOSAL_NOT_FOUND FIX_ARGUMENTS false
REVIEW PROPOSAL_DECIDED FIX_ARGUMENTS false
REVIEW STALE_REVISION FIX_ARGUMENTS false
REVIEW PROPOSAL_MALFORMED CONTACT_OPERATOR false
REMOTE_BUSY RETRIES_EXHAUSTED RETRY true
PATH_BUSY LOCK_TIMEOUT RETRY true
STORAGE_FAILURE STORE_UNREACHABLE RETRY true
STORAGE_FAILURE ACCESS_DENIED CHECK_STORE false
STORAGE_FAILURE STORE_ERROR RETRY true
STORAGE_FAILURE PUBLICATION_UNPROVEN PULL_TO_VERIFY true
STORAGE_INTEGRITY CHECKSUM_MISMATCH CONTACT_OPERATOR false
STORAGE_INTEGRITY MISSING_PACK CONTACT_OPERATOR false
STORAGE_INTEGRITY INVALID_MANIFEST CONTACT_OPERATOR false
STORAGE_INTEGRITY UNSUPPORTED_MANIFEST CONTACT_OPERATOR false
STORAGE_INTEGRITY MISSING_OBJECT CONTACT_OPERATOR false
STORAGE_INTEGRITY INVALID_REMOTE_CONTENT CONTACT_OPERATOR false
STORAGE_INTEGRITY REMOTE_ROLLED_BACK CONTACT_OPERATOR false
RECOVERY_FAILURE UNEXPECTED_FAILURE RETRY true
RECOVERY_FAILURE RESYNC_PENDING RETRY true
ENGINE_FAILED INTERNAL_ERROR RETRY true
ENGINE_FAILED PRIVATE_STATE_UNAVAILABLE CONTACT_OPERATOR false
ENGINE_FAILED LOCAL_WRITE_FAILED CONTACT_OPERATOR false`
  .trim()
  .split('\n')
  .map((line) => line.split(' '));

// Reasons this release adds for real failures contract §3's minimum does not name ("add reasons
// where a real failure needs one"), in catalogue order after the minimum.
const ADDED = [
  // The embedded store's own disk is full or read-only (docs/reliability.md).
  ['ENGINE_FAILED', 'STORE_WRITE_FAILED', 'CONTACT_OPERATOR', 'false'],
];

describe('the catalogue', () => {
  it('holds exactly contract §3’s codes, reasons, actions and verdicts, plus the added ones', () => {
    expect(
      catalogueEntries().map(({ code, reason, spec }) => [
        code,
        reason,
        spec.action,
        String(spec.retryable),
      ]),
    ).toEqual([...CONTRACT_TABLE, ...ADDED]);
  });

  it('never reuses a reason token across codes, and every reason says when it happens', () => {
    const reasons = catalogueEntries().map((e) => e.reason);
    expect(new Set(reasons).size).toBe(reasons.length);
    for (const { spec } of catalogueEntries()) {
      expect(spec.when.length).toBeGreaterThan(0);
      expect(Object.keys(ACTIONS)).toContain(spec.action);
    }
    for (const code of Object.keys(CATALOGUE)) expect(code).toMatch(/^[A-Z][A-Z_]*$/);
  });

  it('lists the file reasons and the closed ENGINE_FAILED detail set of contract §3', () => {
    expect(Object.keys(FILE_REASONS)).toEqual([
      'TEXT_CONFLICT',
      'MARKER_BLOCK',
      'MODIFY_DELETE',
      'FILE_DIRECTORY',
      'NOT_UTF8',
      'CONTAINS_NUL',
      'SYMLINK',
      'SPECIAL_FILE',
      'INVALID_NAME',
      'NAME_COLLISION',
      'PATH_TOO_LONG',
      'PATH_TOO_DEEP',
      'FILE_TOO_LARGE',
      'READ_ONLY_PATH',
    ]);
    expect(ENGINE_DETAILS).toEqual([
      'disk full',
      'permission denied',
      'read-only file system',
      'too many open files',
      'out of memory',
      'file name too long',
    ]);
  });

  it('refuses at run time a reason of another code that was cast past the types', () => {
    expect(() => reasonSpec('INVALID_REQUEST', 'MERGE_CONFLICT' as never)).toThrow(TypeError);
    expect(
      () => new DomainError({ code: 'PATH_BUSY', reason: 'MERGE_CONFLICT' as never, message: 'm' }),
    ).toThrow(TypeError);
  });
});

describe('DomainError', () => {
  it('keeps its tokens, files and cause, and is recognised by isDomainError', () => {
    const cause = new Error('inner');
    const err = new DomainError({
      code: 'PATH_BUSY',
      reason: 'LOCK_TIMEOUT',
      message: 'busy',
      cause,
    });
    expect([err.code, err.reason, err.message, err.files, err.cause]).toEqual([
      'PATH_BUSY',
      'LOCK_TIMEOUT',
      'busy',
      [],
      cause,
    ]);
    expect(err).toBeInstanceOf(Error);
    expect(isDomainError(err)).toBe(true);
    expect(isDomainError(cause)).toBe(false);
    expect(isDomainError({ code: 'PATH_BUSY', reason: 'LOCK_TIMEOUT' })).toBe(false);
    expect(isDomainError(null)).toBe(false);
  });

  it('makes a reason of another code, and misplaced detail or recovery, a type error', () => {
    const code = 'INVALID_REQUEST' as 'INVALID_REQUEST' | 'PATH_BUSY';
    const build = () => [
      // @ts-expect-error MERGE_CONFLICT belongs to CONTENT_CONFLICT
      new DomainError({ code: 'INVALID_REQUEST', reason: 'MERGE_CONFLICT', message: 'm' }),
      // @ts-expect-error a union code does not widen the reasons: LOCK_TIMEOUT is not INVALID_REQUEST's
      new DomainError({ code, reason: 'LOCK_TIMEOUT', message: 'm' }),
      new DomainError({
        code: 'PATH_BUSY',
        reason: 'LOCK_TIMEOUT',
        message: 'm',
        // @ts-expect-error detail is for ENGINE_FAILED only
        detail: 'disk full',
      }),
      new DomainError({
        code: 'PATH_BUSY',
        reason: 'LOCK_TIMEOUT',
        message: 'm',
        // @ts-expect-error recovery is for RECOVERY_FAILURE only
        recovery: { stage: 'scan', remoteAccepted: 'no', resynchronized: false },
      }),
    ];
    expect(build).toThrow(TypeError);
  });
});
