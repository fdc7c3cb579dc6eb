import diff3Merge from 'diff3';
import { firstLineEnding, fromByteString, lineText, splitLines, toByteString } from './lines';
import {
  CLOSE_MARKER,
  findMarkerBlocks,
  type LineRange,
  OPEN_MARKER,
  SEPARATOR_MARKER,
} from './markers';

export type { LineRange } from './markers';

/**
 * How a region where both sides only insert lines at the same place of the base merges
 * (contract §6): `keep` (the product's default) keeps both insertions, R's lines first, their
 * common leading lines once, without markers; `conflict` writes markers there, git's rule.
 */
export type MergeAdditions = 'keep' | 'conflict';

/** Options of {@link mergeText} and {@link mergeAdded}. */
export interface TextMergeOptions {
  /** Concurrent insertions at the same place (default `keep`). */
  additions?: MergeAdditions;
}

/** Merged content, whether the merge wrote conflict blocks, and the blocks it holds. */
export interface TextMergeResult {
  content: Uint8Array;
  /** True when the merge itself wrote at least one conflict block. */
  conflicted: boolean;
  /**
   * The marker blocks of `content` as the documented scanner ({@link findMarkerBlocks}, contract §6)
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

  /**
   * Both sides only inserted lines here (contract §6, concurrent additions): R's lines, then L's,
   * their common leading run once; a side left without a final line ending gets the file's
   * before the other side's lines. Every line either side wrote is kept.
   */
  bothInserted(local: string[], remote: string[]): void {
    let shared = 0;
    while (
      shared < local.length &&
      shared < remote.length &&
      lineText(local[shared] as string) === lineText(remote[shared] as string)
    ) {
      // Equal up to the terminator (the diffstat's notion of a line): R's bytes, unless R's
      // copy is its unterminated last line and L's goes on.
      const mine = local[shared] as string;
      const theirs = remote[shared] as string;
      this.#lines.push(theirs.endsWith('\n') || !mine.endsWith('\n') ? theirs : mine);
      shared++;
    }
    this.clean(remote.slice(shared));
    if (shared < local.length) {
      this.#terminateLast();
      this.clean(local.slice(shared));
    }
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

/** The marker line ending of contract §6: the local side's first EOL, else the remote's, else LF. */
function markerEol(local: string, remote: string): string {
  return firstLineEnding(local) ?? firstLineEnding(remote) ?? '\n';
}

/**
 * Three-way line merge through the `diff3` library (the one isomorphic-git uses; fast on large
 * files). Lines keep their terminators, so CRLF and a missing final newline survive and count as
 * differences, as in `git merge-file`. Identical changes on both sides merge cleanly; changes to
 * the same or adjacent lines conflict and are written with the exact markers of contract §6 —
 * except, under `additions: 'keep'`, where both sides only inserted at the same place of A
 * (docs/merge.md, "Concurrent additions").
 */
export function mergeText(
  base: Uint8Array,
  local: Uint8Array,
  remote: Uint8Array,
  options: TextMergeOptions = {},
): TextMergeResult {
  const keep = (options.additions ?? 'keep') === 'keep';
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
    else if (region.conflict) {
      const { a: localLines, o: baseLines, b: remoteLines } = region.conflict;
      // diff3 joins hunks that touch the same or adjacent base lines; an empty base slice
      // means neither side removed or changed a line of A here: both only inserted.
      if (keep && baseLines.length === 0) writer.bothInserted(localLines, remoteLines);
      else writer.conflict(localLines, remoteLines);
    }
  }
  return writer.result();
}

/**
 * add/add with different content (contract §6). `keep`: the same case as concurrent insertions
 * over an empty base (R's content, then L's, their common leading lines once). `conflict`: one
 * conflict over both whole files.
 */
export function mergeAdded(
  local: Uint8Array,
  remote: Uint8Array,
  options: TextMergeOptions = {},
): TextMergeResult {
  if ((options.additions ?? 'keep') === 'keep')
    return mergeText(new Uint8Array(0), local, remote, options);
  const [localText, remoteText] = [toByteString(local), toByteString(remote)];
  const writer = new MergeWriter(markerEol(localText, remoteText));
  writer.conflict(splitLines(localText), splitLines(remoteText));
  return writer.result();
}
