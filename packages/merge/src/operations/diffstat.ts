import type { ObjectDb, TreeEntries } from '../storage/object-db';
import { splitLines, toByteString } from './lines';

/**
 * Lines added and removed in one file: the same type as `FileStat` of `@slivingdoc/envelope`
 * on purpose. The merge imports no other `@slivingdoc` package (tooling/layers.json) and the
 * envelope may not import the merge, so this twin stays; `engine/test/vocabulary.test.ts`
 * fails when the two drift.
 */
export interface FileStat {
  path: string;
  insertions: number;
  deletions: number;
}

/** Diffstat lines compare without their LF and one trailing CR (contract §6), so CRLF→LF is no change. */
function comparableLines(content: Uint8Array): string[] {
  return splitLines(toByteString(content)).map((line) => {
    let end = line.length;
    if (line.charCodeAt(end - 1) === 10) end--;
    if (line.charCodeAt(end - 1) === 13) end--;
    return line.slice(0, end);
  });
}

/** Work (cells of the Myers search) a diffstat may spend on one file before it approximates. */
const MAX_DIFF_COST = 50_000_000;

/**
 * Lines of `a` not matched in `b` plus lines of `b` not matched in `a`, as multisets: the edit
 * distance when no kept line moved, and a deterministic lower bound otherwise.
 */
function multisetDistance(a: string[], b: string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let unmatched = 0;
  for (const line of b) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else unmatched++;
  }
  for (const left of counts.values()) unmatched += left;
  return unmatched;
}

/**
 * Length of the shortest edit script between `a` and `b` (Myers' O((N+M)D) greedy algorithm).
 * Hand-written because only the distance is needed: a minimal script's insertions and deletions
 * follow from it (ins − del = |b| − |a|), so every minimal diff gives the same counts, and
 * tracking the path (as diff libraries do) would cost memory for nothing. Like git's xdiff, it
 * stops being exact past a cost bound (a near-total rewrite of a huge file would otherwise take
 * minutes): beyond {@link MAX_DIFF_COST} it counts the unmatched lines instead (docs/merge.md).
 */
function editDistance(a: string[], b: string[]): number {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  if (n === 0 || m === 0) return n + m;
  const max = n + m;
  const maxD = Math.max(256, Math.floor(MAX_DIFF_COST / max));
  const v = new Int32Array(2 * max + 2);
  for (let d = 0; d <= max; d++) {
    if (d > maxD) return multisetDistance(a.slice(start, endA), b.slice(start, endB));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v[max + k - 1] as number) < (v[max + k + 1] as number));
      let x = down ? (v[max + k + 1] as number) : (v[max + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[start + x] === b[start + y]) {
        x++;
        y++;
      }
      v[max + k] = x;
      if (x >= n && y >= m) return d;
    }
  }
  return max;
}

/** Lines inserted and deleted by a minimal line diff from `before` to `after` (contract §6 line rule). */
export function lineDiffStat(
  before: Uint8Array,
  after: Uint8Array,
): { insertions: number; deletions: number } {
  const a = comparableLines(before);
  const b = comparableLines(after);
  const distance = editDistance(a, b);
  const growth = b.length - a.length;
  return { insertions: (distance + growth) / 2, deletions: (distance - growth) / 2 };
}

/**
 * Byte order of UTF-8 paths (contract §2 ordering): `compareUtf8` of `@slivingdoc/envelope`,
 * kept here for the reason `FileStat` is (`engine/test/vocabulary.test.ts` checks the diffstat order).
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Per-file line statistics from `before` to `after`, sorted by the UTF-8 bytes of the path.
 * Only paths whose oids differ are read. An added or deleted file always has an entry (0/0 for
 * an empty one); a modified file only when its line diff is non-empty.
 */
export async function diffstat(
  before: TreeEntries,
  after: TreeEntries,
  db: ObjectDb,
): Promise<FileStat[]> {
  const empty = new Uint8Array(0);
  const stats: FileStat[] = [];
  const paths = new Set<string>();
  for (const [path, oid] of before) if (after.get(path) !== oid) paths.add(path);
  for (const [path, oid] of after) if (before.get(path) !== oid) paths.add(path);
  for (const path of paths) {
    const oldOid = before.get(path);
    const newOid = after.get(path);
    const stat = lineDiffStat(
      oldOid ? await db.readBlob(oldOid) : empty,
      newOid ? await db.readBlob(newOid) : empty,
    );
    if (oldOid === undefined || newOid === undefined || stat.insertions + stat.deletions > 0)
      stats.push({ path, ...stat });
  }
  return stats.sort((x, y) => compareUtf8(x.path, y.path));
}
