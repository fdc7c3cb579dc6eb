import {
  type CommitRefusal,
  type PathSets,
  withCommitRefusalSentence,
  withPathSetSentences,
} from '@slivingdoc/envelope';

/** The two tool names; there is no third tool. */
export const TOOL_NAMES = ['notes_pull', 'notes_commit'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** The page's descriptions, to the letter (note the typographic apostrophes). */
export const BASE_DESCRIPTIONS: Record<ToolName, string> = {
  notes_pull:
    'Write the current notebook into the notebook directory and record the accepted state. Omit path or pass an empty string to use the server’s notebook directory, which the result reports. Edit UTF-8 text files (without U+0000) there between notes_pull and notes_commit; notes_commit publishes the changes and incorporates concurrent non-conflicting changes.',
  notes_commit:
    'Publish the caller’s changes in the notebook directory and incorporate concurrent non-conflicting changes. Omit path or pass an empty string to use the server’s notebook directory, which the result reports. message must be non-blank UTF-8 without U+0000, at most 16,384 bytes; it is retained in recent internal history only.',
};

/**
 * The advertised input schemas, exactly as contract §2 fixes them: no maxLength (the strict
 * decoder enforces byte limits), additionalProperties false.
 */
export const INPUT_SCHEMAS = {
  notes_pull: {
    type: 'object',
    properties: { path: { type: 'string' } },
    additionalProperties: false,
  },
  notes_commit: {
    type: 'object',
    properties: { message: { type: 'string' }, path: { type: 'string' } },
    required: ['message'],
    additionalProperties: false,
  },
} as const;

/**
 * Appended (after one space) to notes_commit's description and to the instructions while the
 * notebook's review setting may queue this participant's commits (docs/review.md).
 */
export const REVIEW_SENTENCE =
  'Review applies: notes_commit may store your change as a proposal for a person to approve or reject, answer status "pending" with a proposalId, and publish nothing; keep working, and your next notes_pull or notes_commit reports the outcome.';

/** `text` with the review sentence appended while review applies. */
export function withReviewSentence(text: string, review: boolean): string {
  return review ? `${text} ${REVIEW_SENTENCE}` : text;
}

/**
 * The server instructions: the fixed sentences, then the path-set sentences, then the sentence
 * saying commits are refused when they are (contract §2).
 */
export function serverInstructions(
  notebookDir: string,
  sets: PathSets,
  commitsRefused?: CommitRefusal,
): string {
  return withCommitRefusalSentence(
    withPathSetSentences(baseInstructions(notebookDir), sets),
    commitsRefused,
  );
}

/** A tool's description: the page's text, the path-set sentences, and for notes_commit the refusal. */
export function toolDescription(
  name: ToolName,
  sets: PathSets,
  commitsRefused: CommitRefusal | undefined,
): string {
  const described = withPathSetSentences(BASE_DESCRIPTIONS[name], sets);
  return name === 'notes_commit' ? withCommitRefusalSentence(described, commitsRefused) : described;
}

/** The server instructions' fixed sentences for a notebook directory. */
export function baseInstructions(notebookDir: string): string {
  return `The notebook directory is ${notebookDir}. Call notes_pull, edit UTF-8 text files (without U+0000) there, then call notes_commit to publish. Both tools default to that directory; pass path only to address a subdirectory of it.`;
}
