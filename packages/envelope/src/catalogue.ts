/**
 * The error catalogue of contract §3: the single source of truth for every code, its reasons,
 * each reason's action and retryable verdict, every file reason and the closed set of
 * ENGINE_FAILED details. `docs/errors.md` is generated from this module
 * (`node tooling/generate-errors.mjs`) and a test fails when the two drift apart.
 *
 * Tokens are UPPER_SNAKE and stable; a token is never reused for a different meaning.
 */

/** What the caller should do next, one token per reason. */
export const ACTIONS = {
  FIX_ARGUMENTS: 'Correct the call’s arguments; the same call will fail again unchanged.',
  CHOOSE_PATH: 'Pass a different notebook directory (or omit path to use the server’s own).',
  PULL_FIRST: 'Call notes_pull on this directory, then notes_commit again.',
  COMMIT_FIRST:
    'Commit (or undo) the unpublished edits in this directory first, then run the command again.',
  EDIT_FILES:
    'Edit the listed files (resolve conflicts, remove marker blocks or unsupported files), then call again.',
  WRITE_ELSEWHERE:
    'Keep your edits under the writable paths; the listed files were reset to the accepted state.',
  ASK_FOR_WRITE_ACCESS:
    'This session may only read: ask the operator for a token that may write (notes_pull still works).',
  WAIT_FOR_REVIEW:
    'A person must approve or reject your open proposals first; keep working, and commit again after the next notes_pull reports their outcome.',
  ASK_FOR_STORE_WRITE_ACCESS:
    'These store credentials can only read: ask the store’s owner for write access to this notebook’s prefix, then restart the server (notes_pull still works).',
  RETRY: 'Call again, after a short wait.',
  CHECK_STORE:
    'Ask the operator to fix the store’s credentials or permissions; retrying unchanged will not help.',
  PULL_TO_VERIFY:
    'Call notes_pull to learn whether the publication landed before committing again.',
  CONTACT_OPERATOR:
    'Report the diagnosticId to the operator; the server or its store needs attention.',
} as const;

/** The stable action tokens. */
export type Action = keyof typeof ACTIONS;

/** One reason of a code: its single action, its retryable verdict and when it happens. */
export interface ReasonSpec {
  readonly action: Action;
  readonly retryable: boolean;
  readonly when: string;
}

/** One error code: what it means and its reasons. */
export interface CodeSpec {
  readonly summary: string;
  readonly reasons: Readonly<Record<string, ReasonSpec>>;
}

/** Every error code with its reasons (contract §3), in the order the documentation lists them. */
export const CATALOGUE = {
  INVALID_REQUEST: {
    summary: 'The call itself is wrong: its arguments, its path or its timing.',
    reasons: {
      INVALID_ARGUMENTS: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'unknown field, explicit null, wrong type, missing `message`, duplicate key',
      },
      PATH_INVALID: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'path bytes out of range (1–4,096 after `~/` expansion), not absolute after `~/`, invalid UTF-8',
      },
      PATH_OUTSIDE_ROOT: {
        action: 'CHOOSE_PATH',
        retryable: false,
        when: 'the path resolves outside the workspace root',
      },
      PATH_OUTSIDE_TOKEN_DIR: {
        action: 'CHOOSE_PATH',
        retryable: false,
        when: "over HTTP, the path is not the token's own directory or below it; nothing was read or changed",
      },
      PATH_NOT_DIRECTORY: {
        action: 'CHOOSE_PATH',
        retryable: false,
        when: 'the path exists and is not a directory',
      },
      PATH_SYMLINK: {
        action: 'CHOOSE_PATH',
        retryable: false,
        when: 'a component of the path is a symlink',
      },
      NESTED_NOTEBOOK: {
        action: 'CHOOSE_PATH',
        retryable: false,
        when: 'the directory is inside, or contains, another managed notebook directory',
      },
      MESSAGE_INVALID: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'the message is blank (only Unicode white space), over 16,384 bytes, contains U+0000 or is invalid UTF-8',
      },
      NOT_PULLED: {
        action: 'PULL_FIRST',
        retryable: false,
        when: 'notes_commit before any notes_pull of this directory',
      },
      UNPUBLISHED_EDITS: {
        action: 'COMMIT_FIRST',
        retryable: false,
        when: 'CLI `revert` or `proposals approve` on a directory that holds unpublished edits (they are never mixed into a revert or an approval)',
      },
      GENERATION_NOT_RETAINED: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'CLI `revert --generation N` where N is not a publication of the retained history (see `slivingdoc log`)',
      },
      FILE_NOT_FOUND: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'CLI `blame` (or a view page) names a file the notebook does not hold at that generation, or one that is not text',
      },
    },
  },
  INVALID_CONTENT: {
    summary: 'The notebook directory holds files that are not notebook state.',
    reasons: {
      UNSUPPORTED_FILES: {
        action: 'EDIT_FILES',
        retryable: false,
        when: 'the directory holds files that are not notebook state (the file reasons say why)',
      },
    },
  },
  CONTENT_CONFLICT: {
    summary: 'Concurrent edits could not be merged, or unresolved conflict markers remain.',
    reasons: {
      MERGE_CONFLICT: {
        action: 'EDIT_FILES',
        retryable: false,
        when: 'the three-way merge conflicted; conflict markers were written into the listed files',
      },
      UNRESOLVED_MARKERS: {
        action: 'EDIT_FILES',
        retryable: false,
        when: 'notes_commit found complete conflict marker blocks in changed files',
      },
    },
  },
  READ_ONLY_PATH: {
    summary: 'The commit changed paths this server does not let callers write.',
    reasons: {
      CHANGE_OUTSIDE_WRITABLE: {
        action: 'WRITE_ELSEWHERE',
        retryable: false,
        when: 'notes_commit touched read-only paths; nothing was published and those files were reset. From `proposals approve`: the proposal changes paths read-only for the approving participant; nothing was published and the proposal stays open',
      },
    },
  },
  READ_ONLY_SESSION: {
    summary:
      'The session may only read the notebook: its token is read-only, or the store’s credentials can only read.',
    reasons: {
      TOKEN_READ_ONLY: {
        action: 'ASK_FOR_WRITE_ACCESS',
        retryable: false,
        when: 'notes_commit (or a revert) in an HTTP session whose token was added with `--read-only`; nothing was read, changed or published',
      },
      STORE_READ_ONLY: {
        action: 'ASK_FOR_STORE_WRITE_ACCESS',
        retryable: false,
        when: 'notes_commit, `commit` or `revert` in a process whose start-up probe found that the store’s credentials can read this prefix but not write it (AccessDenied); nothing was read, changed or published',
      },
    },
  },
  REVIEW: {
    summary:
      'The notebook’s review setting or a proposal stops this call (docs/review.md); nothing was published.',
    reasons: {
      SETTING_INVALID: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the notebook’s review setting in the store cannot be parsed; every commit that could be reviewed is refused (fail closed, never `direct`)',
      },
      TOO_MANY_PROPOSALS: {
        action: 'WAIT_FOR_REVIEW',
        retryable: false,
        when: 'notes_commit in queue mode by an actor that already has the most open proposals allowed',
      },
      PROPOSAL_BEING_APPROVED: {
        action: 'RETRY',
        retryable: true,
        when: 'notes_commit in queue mode while a person is approving the directory’s open proposal; nothing was proposed, the edits stay in the directory',
      },
      PROPOSAL_NOT_FOUND: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'CLI `proposals show|approve|reject ID` names no stored proposal (see `slivingdoc proposals list`)',
      },
      PROPOSAL_DECIDED: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: 'CLI `proposals approve|reject ID` on a proposal already approved or rejected',
      },
      STALE_REVISION: {
        action: 'FIX_ARGUMENTS',
        retryable: false,
        when: '`proposals approve ID --revision N` where the proposal was revised since revision N (the message names the current one)',
      },
      PROPOSAL_MALFORMED: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'a stored proposal record fails decoding or validation; nothing was changed',
      },
    },
  },
  REMOTE_BUSY: {
    summary: 'Other publications kept winning the race for the accepted notebook.',
    reasons: {
      RETRIES_EXHAUSTED: {
        action: 'RETRY',
        retryable: true,
        when: 'every compare-and-swap attempt lost to another publication',
      },
    },
  },
  PATH_BUSY: {
    summary: 'Another call or process is working on this notebook directory.',
    reasons: {
      LOCK_TIMEOUT: {
        action: 'RETRY',
        retryable: true,
        when: 'another process held this directory’s lock too long',
      },
    },
  },
  STORAGE_FAILURE: {
    summary: 'The object store could not be used for this call.',
    reasons: {
      STORE_UNREACHABLE: {
        action: 'RETRY',
        retryable: true,
        when: 'connection refused, DNS failure, timeout before the request was sent',
      },
      ACCESS_DENIED: {
        action: 'CHECK_STORE',
        retryable: false,
        when: 'the store refused the credentials or permissions',
      },
      STORE_ERROR: {
        action: 'RETRY',
        retryable: true,
        when: 'any other store error (5xx, throttling)',
      },
      PUBLICATION_UNPROVEN: {
        action: 'PULL_TO_VERIFY',
        retryable: true,
        when: 'the publication may or may not have landed and cannot be proven either way',
      },
    },
  },
  STORAGE_INTEGRITY: {
    summary: 'The accepted notebook in the store is damaged or unreadable by this release.',
    reasons: {
      CHECKSUM_MISMATCH: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'a pack’s size or SHA-256 differs from its descriptor',
      },
      MISSING_PACK: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'a referenced pack is gone while the manifest is unchanged',
      },
      INVALID_MANIFEST: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the `current` manifest fails decoding or validation',
      },
      UNSUPPORTED_MANIFEST: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the `current` manifest has a version this release cannot read',
      },
      MISSING_OBJECT: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'a pack lacks an object the accepted head needs',
      },
      INVALID_REMOTE_CONTENT: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the accepted tree holds a path or file content that is not notebook state',
      },
      REMOTE_ROLLED_BACK: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: '`current` is absent or older than this directory’s baseline (the store was wiped or rolled back)',
      },
    },
  },
  RECOVERY_FAILURE: {
    summary: 'A failure interrupted a call after it began rewriting the directory; repair ran.',
    reasons: {
      UNEXPECTED_FAILURE: {
        action: 'RETRY',
        retryable: true,
        when: 'an unexpected failure after local mutation started; repair ran (see `recovery`)',
      },
      RESYNC_PENDING: {
        action: 'RETRY',
        retryable: true,
        when: 'a previous repair is still pending and could not finish now',
      },
    },
  },
  ENGINE_FAILED: {
    summary: 'The server itself failed; `detail` names the cause when it is one of a fixed set.',
    reasons: {
      INTERNAL_ERROR: {
        action: 'RETRY',
        retryable: true,
        when: 'an unclassified internal failure',
      },
      PRIVATE_STATE_UNAVAILABLE: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the server’s private state cannot be read or written (disk full, permissions); a corrupt one is repaired instead',
      },
      LOCAL_WRITE_FAILED: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the notebook directory cannot be written (disk full, permissions, read-only file system)',
      },
      STORE_WRITE_FAILED: {
        action: 'CONTACT_OPERATOR',
        retryable: false,
        when: 'the embedded store’s directory cannot be written (disk full, read-only file system); nothing was published',
      },
    },
  },
} as const satisfies Record<string, CodeSpec>;

/** The stable error codes. */
export type ErrorCode = keyof typeof CATALOGUE;

/** The reasons that belong to code `C` (and to no other code); distributes over a union. */
export type ReasonOf<C extends ErrorCode> = C extends ErrorCode
  ? keyof (typeof CATALOGUE)[C]['reasons'] & string
  : never;

/** Every reason token of the catalogue. */
export type Reason = ReasonOf<ErrorCode>;

/** The per-file reasons of `files[].reason`, with what each means. */
export const FILE_REASONS = {
  TEXT_CONFLICT: 'both sides changed the same or adjacent lines; a marker block was written',
  MARKER_BLOCK: 'the file holds a complete conflict marker block',
  MODIFY_DELETE: 'one side modified the file, the other deleted it; the modified content was kept',
  FILE_DIRECTORY:
    'one side has a file where the other has a directory; the local file moved to `<path>~local`',
  NOT_UTF8: 'the content is not valid UTF-8',
  CONTAINS_NUL: 'the content contains U+0000',
  SYMLINK: 'the entry is a symbolic link',
  SPECIAL_FILE: 'the entry is a socket, FIFO or device',
  INVALID_NAME:
    'a path segment breaks the naming rules (characters, reserved names, trailing space or dot)',
  NAME_COLLISION: 'the path collides with another under Unicode case folding',
  PATH_TOO_LONG: 'the notebook path exceeds 4,096 bytes or a segment exceeds 255 bytes',
  PATH_TOO_DEEP: 'the absolute path (directory plus notebook path) exceeds 4,095 bytes',
  FILE_TOO_LARGE: 'the file is larger than 64 MiB',
  READ_ONLY_PATH: 'the change touched a read-only path; the file was reset to the accepted state',
} as const;

/** The stable per-file reason tokens. */
export type FileReason = keyof typeof FILE_REASONS;

/** The closed set of ENGINE_FAILED `detail` descriptions. */
export const ENGINE_DETAILS = [
  'disk full',
  'permission denied',
  'read-only file system',
  'too many open files',
  'out of memory',
  'file name too long',
] as const;

/** One fixed ENGINE_FAILED detail. */
export type EngineDetail = (typeof ENGINE_DETAILS)[number];

/** The stages a RECOVERY_FAILURE's `recovery.stage` names (contract §10). */
export const RECOVERY_STAGES = [
  'scan',
  'fetch',
  'merge',
  'publish',
  'materialize',
  'record',
  'resync',
] as const;

/** One recovery stage. */
export type RecoveryStage = (typeof RECOVERY_STAGES)[number];

/** Every code in catalogue order. */
export const ERROR_CODES = Object.keys(CATALOGUE) as ErrorCode[];

/** The action, retryable verdict and circumstances of one reason of one code. */
export function reasonSpec<C extends ErrorCode>(code: C, reason: ReasonOf<C>): ReasonSpec {
  const spec = (CATALOGUE[code].reasons as Record<string, ReasonSpec>)[reason];
  // Unreachable through the types; guards callers that cast their way past them.
  if (!spec) throw new TypeError(`reason ${String(reason)} does not belong to code ${code}`);
  return spec;
}

/** Every (code, reason) pair in catalogue order. */
export function catalogueEntries(): { code: ErrorCode; reason: Reason; spec: ReasonSpec }[] {
  return ERROR_CODES.flatMap((code) =>
    Object.entries(CATALOGUE[code].reasons as Record<string, ReasonSpec>).map(([reason, spec]) => ({
      code,
      reason: reason as Reason,
      spec,
    })),
  );
}
