import { lineText, splitLines, toByteString } from './lines';

/**
 * One-based inclusive line range of a marker block in written content: the same type as
 * `LineRange` of `@slivingdoc/envelope`, kept here for the reason `FileStat` is
 * (`diffstat.ts`; `engine/test/vocabulary.test.ts` fails when the two drift).
 */
export interface LineRange {
  start: number;
  end: number;
}

export const OPEN_MARKER = '<<<<<<< local';
export const SEPARATOR_MARKER = '=======';
export const CLOSE_MARKER = '>>>>>>> remote';

/**
 * Complete marker blocks of contract §6, one-based inclusive from the `<<<<<<< local` line to the
 * `>>>>>>> remote` line. A block needs the three exact marker lines in order (LF, CRLF, or the
 * end of the content as terminator). Blocks do not nest: an opener inside an open block is
 * ordinary content, and a closer with no separator since the opener does not close it.
 */
export function findMarkerBlocks(content: Uint8Array): LineRange[] {
  const blocks: LineRange[] = [];
  let openedAt = 0;
  let separated = false;
  const lines = splitLines(toByteString(content));
  for (let index = 0; index < lines.length; index++) {
    const text = lineText(lines[index] as string);
    const number = index + 1;
    if (openedAt === 0) {
      if (text === OPEN_MARKER) openedAt = number;
    } else if (!separated) {
      if (text === SEPARATOR_MARKER) separated = true;
    } else if (text === CLOSE_MARKER) {
      blocks.push({ start: openedAt, end: number });
      openedAt = 0;
      separated = false;
    }
  }
  return blocks;
}
