import diff3Merge from 'diff3';
import { firstLineEnding, fromByteString, splitLines, toByteString } from './lines';

/**
 * One-based inclusive line range of a marker block in written content: the same type as
 * `LineRange` of `@slivingdoc/envelope`, kept here for the reason `FileStat` is
 * (`diffstat.ts`; `engine/test/vocabulary.test.ts` fails when the two drift).
 */
export interface LineRange {
  start: number;
  end: number;
}

/** Merged content and the marker blocks written into it. */
export interface TextMergeResult {
  content: Uint8Array;
  conflicts: LineRange[];
}

export const OPEN_MARKER = '<<<<<<< local';
export const SEPARATOR_MARKER = '=======';
export const CLOSE_MARKER = '>>>>>>> remote';

/** Writes merged output and numbers the marker blocks as it goes. */
class MergeWriter {
  readonly #lines: string[] = [];
  readonly conflicts: LineRange[] = [];
  readonly #eol: string;

  constructor(eol: string) {
    this.#eol = eol;
  }

  clean(lines: string[]): void {
    for (const line of lines) this.#lines.push(line);
  }

  conflict(local: string[], remote: string[]): void {
    // A clean run ending without EOL is followed by a marker: give it the file's EOL first.
    this.#terminateLast();
    const start = this.#lines.length + 1;
    this.#lines.push(OPEN_MARKER + this.#eol);
    this.clean(local);
    this.#terminateLast();
    this.#lines.push(SEPARATOR_MARKER + this.#eol);
    this.clean(remote);
    this.#terminateLast();
    this.#lines.push(CLOSE_MARKER + this.#eol);
    this.conflicts.push({ start, end: this.#lines.length });
  }

  #terminateLast(): void {
    const last = this.#lines.length - 1;
    if (last >= 0 && !(this.#lines[last] as string).endsWith('\n')) this.#lines[last] += this.#eol;
  }

  result(): TextMergeResult {
    return { content: fromByteString(this.#lines.join('')), conflicts: this.conflicts };
  }
}

/** The marker line ending of SPEC §6: the local side's first EOL, else the remote's, else LF. */
function markerEol(local: string, remote: string): string {
  return firstLineEnding(local) ?? firstLineEnding(remote) ?? '\n';
}

/**
 * Three-way line merge through the `diff3` library (the one isomorphic-git uses; fast on large
 * files). Lines keep their terminators, so CRLF and a missing final newline survive and count as
 * differences, as in `git merge-file`. Identical changes on both sides merge cleanly; changes to
 * the same or adjacent lines conflict and are written with the exact markers of SPEC §6.
 */
export function mergeText(
  base: Uint8Array,
  local: Uint8Array,
  remote: Uint8Array,
): TextMergeResult {
  const [baseText, localText, remoteText] = [
    toByteString(base),
    toByteString(local),
    toByteString(remote),
  ];
  const writer = new MergeWriter(markerEol(localText, remoteText));
  for (const region of diff3Merge(
    splitLines(localText),
    splitLines(baseText),
    splitLines(remoteText),
  )) {
    if (region.ok) writer.clean(region.ok);
    else if (region.conflict) writer.conflict(region.conflict.a, region.conflict.b);
  }
  return writer.result();
}

/** add/add with different content (SPEC §6): one conflict over both whole files. */
export function wholeFileConflict(local: Uint8Array, remote: Uint8Array): TextMergeResult {
  const [localText, remoteText] = [toByteString(local), toByteString(remote)];
  const writer = new MergeWriter(markerEol(localText, remoteText));
  writer.conflict(splitLines(localText), splitLines(remoteText));
  return writer.result();
}
