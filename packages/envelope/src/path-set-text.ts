import type { PathSets } from './results';

/**
 * Every text about the path sets (contract §2), in one place: the sentences appended to the
 * tool descriptions and instructions, the success text suffix and the candid text lines.
 * With no set configured each is empty, so those surfaces stay byte-for-byte unchanged.
 */

function entries(set: readonly string[]): string {
  return set.join(', ');
}

/** The sentences appended (after one space) to both tool descriptions and the instructions. */
export function pathSetSentences(sets: PathSets): string {
  const sentences: string[] = [];
  if (sets.writable.length > 0)
    sentences.push(
      `Writable paths: ${entries(sets.writable)}. notes_commit refuses any change elsewhere, resets those files, and reports READ_ONLY_PATH; write only under them.`,
    );
  if (sets.readOnly.length > 0)
    sentences.push(
      `Read-only paths: ${entries(sets.readOnly)}. notes_commit refuses any change there, resets those files, and reports READ_ONLY_PATH; ${
        sets.writable.length > 0
          ? 'where the two sets nest, the longest matching entry decides.'
          : 'write elsewhere.'
      }`,
    );
  return sentences.join(' ');
}

/** `base` with the path-set sentences appended after one space (unchanged without sets). */
export function withPathSetSentences(base: string, sets: PathSets): string {
  const sentences = pathSetSentences(sets);
  return sentences ? `${base} ${sentences}` : base;
}

/** The suffix of the success text item (and the CLI's first line); empty without sets. */
export function successSuffix(sets: PathSets): string {
  const { writable, readOnly } = sets;
  if (writable.length > 0 && readOnly.length > 0)
    return ` (writable: ${entries(writable)}; read-only: ${entries(readOnly)}; longest match decides)`;
  if (writable.length > 0) return ` (writable: ${entries(writable)})`;
  if (readOnly.length > 0) return ` (read-only: ${entries(readOnly)})`;
  return '';
}

/** The candid text's closing lines, one per configured set. */
export function candidSetLines(sets: PathSets): string[] {
  return [
    ...(sets.writable.length > 0 ? [`writable: ${entries(sets.writable)}`] : []),
    ...(sets.readOnly.length > 0 ? [`read-only: ${entries(sets.readOnly)}`] : []),
  ];
}
