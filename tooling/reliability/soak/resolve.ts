const MARKERS = new Set(['<<<<<<< local', '=======', '>>>>>>> remote']);

/**
 * Resolves every marker block of `text` (one-based inclusive `ranges`, as the error lists
 * them) by keeping both sides: the three marker lines go, every local and remote line
 * stays, in that order. Returns the new text and the removed lines; anything but a marker
 * line in the removed list would be a deliberate deletion the checker must excuse.
 */
export function keepBothSides(
  text: string,
  ranges: { start: number; end: number }[],
): { text: string; removed: string[] } {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const inBlock = (n: number) => ranges.some((r) => n >= r.start && n <= r.end);
  const removed: string[] = [];
  const kept = lines.filter((line, index) => {
    const bare = line.replace(/\r?\n$/, '');
    if (inBlock(index + 1) && MARKERS.has(bare)) {
      removed.push(bare);
      return false;
    }
    return true;
  });
  return { text: kept.join(''), removed };
}
