/**
 * Why a participant's every commit is refused (contract §2, §3): `token`, an HTTP session
 * whose token is read-only; `store`, a process whose store credentials can only read.
 */
export type CommitRefusal = 'token' | 'store';

const SENTENCES: Record<CommitRefusal, string> = {
  token:
    'This session’s token is read-only: notes_commit is refused with READ_ONLY_SESSION and changes nothing; notes_pull works.',
  store:
    'This server’s store credentials can only read: notes_commit is refused with READ_ONLY_SESSION and changes nothing; notes_pull works.',
};

/**
 * The one sentence appended (after one space, after any path-set sentences) to the server
 * instructions and the notes_commit description when commits are refused; `base` unchanged
 * otherwise.
 */
export function withCommitRefusalSentence(
  base: string,
  refusal: CommitRefusal | undefined,
): string {
  return refusal === undefined ? base : `${base} ${SENTENCES[refusal]}`;
}
