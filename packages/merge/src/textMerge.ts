import diff3Merge from 'diff3';
import { firstLineEnding, fromByteString, splitLines, toByteString } from './lines';
import {
  CLOSE_MARKER,
  findMarkerBlocks,
  type LineRange,
  OPEN_MARKER,
  SEPARATOR_MARKER,
} from './markers';

export type { LineRange } from './markers';

/** Merged content, whether the merge wrote conflict blocks, and the blocks it holds. */
export interface TextMergeResult {
  content: Uint8Array;
  /** True when the merge itself wrote at least one conflict block. */
  conflicted: boolean;
  /**
   * The marker blocks of `content` as the documented scanner ({@link findMarkerBlocks}, SPEC §6)
   * finds them. Derived from the written bytes rather than counted while writing: a side that
   * already holds marker lines (an old block, a stray opener) changes which lines form a block,
   * and the ranges a caller is given must be the ones a later commit's scan refuses.
   */
  conflicts: LineRange[];
}

/** Writes merged output, counting the conflict blocks it writes. */
class MergeWriter {
  readonly #lines: string[] = [];
  #written = 0;
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
    this.#lines.push(OPEN_MARKER + this.#eol);
    this.clean(local);
    this.#terminateLast();
    this.#lines.push(SEPARATOR_MARKER + this.#eol);
    this.clean(remote);
    this.#terminateLast();
    this.#lines.push(CLOSE_MARKER + this.#eol);
    this.#written += 1;
  }

  #terminateLast(): void {
    const last = this.#lines.length - 1;
    if (last >= 0 && !(this.#lines[last] as string).endsWith('\n')) this.#lines[last] += this.#eol;
  }

  result(): TextMergeResult {
    const content = fromByteString(this.#lines.join(''));
    return { content, conflicted: this.#written > 0, conflicts: findMarkerBlocks(content) };
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
