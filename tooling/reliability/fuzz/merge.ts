import { diffstat, findMarkerBlocks, lineDiffStat, mergeText } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import fc from 'fast-check';

const OPEN = '<<<<<<< local';
const SEPARATOR = '=======';
const CLOSE = '>>>>>>> remote';

/** Line-structured text where marker lines (exact and nearly exact) are frequent. */
const lineText = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      OPEN,
      SEPARATOR,
      CLOSE,
      `${OPEN} `,
      '<<<<<<<',
      '======',
      '>>>>>>> remote\r',
      '',
    ),
  },
  { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'c', 'same', 'x y') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);
const ending = fc.constantFrom('\n', '\r\n', '\r', '');
const lines = fc.array(fc.tuple(lineText, ending), { maxLength: 40 });
/** File content: text lines with mixed endings, occasionally raw bytes (invalid UTF-8 included). */
export const fileBytes = fc.oneof(
  {
    weight: 4,
    arbitrary: lines.map((ls) => Buffer.from(ls.map(([t, e]) => t + e).join(''), 'utf8')),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
);

/** Lines as the diffstat counts them: LF-terminated runs, a final run without LF counts. */
function lineCount(bytes: Uint8Array): number {
  let count = 0;
  for (const byte of bytes) if (byte === 10) count++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? count + 1 : count;
}

/** Each line of `bytes` without its LF/CRLF terminator, as the marker rules see it. */
function markerLines(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes).toString('latin1');
  return (text.match(/[^\n]*\n|[^\n]+$/g) ?? []).map((l) => l.replace(/\r?\n$/, ''));
}

/**
 * Marker scanner (contract §6): total on any bytes; every block it reports is one-based,
 * ordered, disjoint, opens on an exact `<<<<<<< local` line, closes on an exact
 * `>>>>>>> remote` line and holds an exact `=======` line in between.
 */
export const markerScanner = fc.property(fileBytes, (bytes) => {
  const blocks = findMarkerBlocks(bytes);
  const text = markerLines(bytes);
  let previousEnd = 0;
  for (const { start, end } of blocks) {
    if (!(start > previousEnd && end > start && end <= text.length))
      throw new Error(`bad range ${start}-${end}`);
    if (text[start - 1] !== OPEN || text[end - 1] !== CLOSE)
      throw new Error(`block ${start}-${end} not delimited by exact markers`);
    if (!text.slice(start, end - 1).includes(SEPARATOR))
      throw new Error(`block ${start}-${end} without separator`);
    previousEnd = end;
  }
});

/**
 * Line diffstat (contract §6): total on any bytes; counts are whole, non-negative, bounded by
 * the line counts, consistent with the growth, symmetric under swapping, and zero for
 * identical content or a CRLF→LF rewrite.
 */
export const lineDiffStatRules = fc.property(fileBytes, fileBytes, (before, after) => {
  const stat = lineDiffStat(before, after);
  const [a, b] = [lineCount(before), lineCount(after)];
  const { insertions: ins, deletions: del } = stat;
  if (!Number.isInteger(ins) || !Number.isInteger(del) || ins < 0 || del < 0)
    throw new Error(`bad counts ${ins}/${del}`);
  if (ins > b || del > a || ins - del !== b - a)
    throw new Error(`inconsistent counts ${ins}/${del} for ${a}→${b} lines`);
  const back = lineDiffStat(after, before);
  if (back.insertions !== del || back.deletions !== ins) throw new Error('not symmetric');
  const same = lineDiffStat(before, before);
  if (same.insertions + same.deletions !== 0) throw new Error('identical content has a diff');
  // Only one trailing CR is ignored, so `x\r\r\n` → `x\r\n` is a real change: skip those.
  const latin1 = Buffer.from(before).toString('latin1');
  if (!latin1.includes('\r\r\n')) {
    const crlf = lineDiffStat(before, Buffer.from(latin1.replace(/\r\n/g, '\n'), 'latin1'));
    if (crlf.insertions + crlf.deletions !== 0) throw new Error('a CRLF→LF rewrite has a diff');
  }
});

const pathArb = fc.constantFrom(
  'a.md',
  'b.md',
  'notes/a.md',
  'notes/z.md',
  'Z.md',
  'é.md',
  'ü/x.md',
);
const treeArb = fc.dictionary(pathArb, fileBytes, { maxKeys: 5 });

/**
 * Tree diffstat: one entry per added or deleted file (even empty), one per modified file
 * with a non-empty line diff, sorted by UTF-8 bytes, each agreeing with `lineDiffStat`.
 */
export const treeDiffstatRules = fc.asyncProperty(
  treeArb,
  treeArb,
  async (beforeFiles, afterFiles) => {
    const db = openMemoryObjectDb();
    const toTree = async (files: Record<string, Uint8Array>) =>
      new Map(
        await Promise.all(
          Object.entries(files).map(async ([p, c]) => [p, await db.writeBlob(c)] as const),
        ),
      );
    const stats = await diffstat(await toTree(beforeFiles), await toTree(afterFiles), db);
    const paths = stats.map((s) => s.path);
    const sorted = [...paths].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    if (paths.join('\0') !== sorted.join('\0')) throw new Error('entries not in UTF-8 byte order');
    const empty = new Uint8Array(0);
    const expected = new Set<string>();
    for (const path of new Set([...Object.keys(beforeFiles), ...Object.keys(afterFiles)])) {
      const [old, now] = [beforeFiles[path], afterFiles[path]];
      const line = lineDiffStat(old ?? empty, now ?? empty);
      if (
        old === undefined ||
        now === undefined ||
        (Buffer.compare(old, now) !== 0 && line.insertions + line.deletions > 0)
      )
        expected.add(path);
      const entry = stats.find((s) => s.path === path);
      if (entry && (entry.insertions !== line.insertions || entry.deletions !== line.deletions))
        throw new Error(`entry for ${path} disagrees with lineDiffStat`);
    }
    if (paths.length !== expected.size || !paths.every((p) => expected.has(p)))
      throw new Error(`entries ${paths} ≠ expected ${[...expected]}`);
  },
);

/**
 * Three-way text merge: total on any text; one unchanged side yields the other side exactly,
 * and the merge writes no conflict of its own (`conflicted`; `conflicts` lists the marker
 * blocks of the result, which a side may already hold: seed 2044102701 found a changed side
 * that is itself a whole `<<<<<<< local` … `>>>>>>> remote` block).
 */
export const textMergeIdentities = fc.property(fileBytes, fileBytes, (base, changed) => {
  for (const [local, remote] of [
    [base, changed],
    [changed, base],
    [changed, changed],
  ] as const) {
    const { content, conflicted } = mergeText(base, local, remote);
    if (conflicted || Buffer.compare(Buffer.from(content), Buffer.from(changed)) !== 0) {
      throw new Error('a one-sided or identical change did not merge to that change');
    }
  }
});
