import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  diffstat,
  findMarkerBlocks,
  type MergeAdditions,
  merge3,
  mergeText,
  type ObjectDb,
  type TreeEntries,
} from '../src/index';
import { openMemoryObjectDb } from '../src/testing';
import { testFoldKey, text, utf8 } from './git-oracle';

/** Writes `files` (path → text) into `db` and returns the path → oid map. */
async function tree(db: ObjectDb, files: Record<string, string>): Promise<TreeEntries> {
  const entries: TreeEntries = new Map();
  for (const [path, content] of Object.entries(files))
    entries.set(path, await db.writeBlob(utf8(content)));
  return entries;
}

/** Reads a merge result back as path → text. */
async function contents(db: ObjectDb, entries: TreeEntries): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [path, oid] of [...entries].sort(([a], [b]) => (a < b ? -1 : 1)))
    out[path] = text(await db.readBlob(oid));
  return out;
}

async function run(
  base: Record<string, string>,
  local: Record<string, string>,
  remote: Record<string, string>,
  additions?: MergeAdditions,
) {
  const db = openMemoryObjectDb();
  const { result, conflicts } = await merge3({
    base: await tree(db, base),
    local: await tree(db, local),
    remote: await tree(db, remote),
    db,
    foldKey: testFoldKey,
    additions,
  });
  return { files: await contents(db, result), conflicts };
}

describe('merge3 per-path rules (contract §6)', () => {
  it('merges changes to different files and to distant regions of one file cleanly', async () => {
    const base = { 'a.md': 'a\n', 'b.md': 'b\n', 'c.md': '1\n2\n3\n4\n5\n' };
    const local = { 'a.md': 'A\n', 'b.md': 'b\n', 'c.md': 'one\n2\n3\n4\n5\n', 'new.md': 'n\n' };
    const remote = { 'a.md': 'a\n', 'c.md': '1\n2\n3\n4\nfive\n' };
    expect(await run(base, local, remote)).toEqual({
      files: { 'a.md': 'A\n', 'c.md': 'one\n2\n3\n4\nfive\n', 'new.md': 'n\n' },
      conflicts: [],
    });
  });

  it('takes identical changes once, including identical additions and deletions', async () => {
    expect(
      await run(
        { 'a.md': 'a', 'b.md': 'b' },
        { 'a.md': 'x', 'c.md': 'c' },
        { 'a.md': 'x', 'c.md': 'c' },
      ),
    ).toEqual({
      files: { 'a.md': 'x', 'c.md': 'c' },
      conflicts: [],
    });
  });

  it('writes a text conflict with ranges on the merged content', async () => {
    const result = await run(
      { 'a.md': 'a\nb\nc\n' },
      { 'a.md': 'a\nL\nc\n' },
      { 'a.md': 'a\nR\nc\n' },
    );
    expect(result.files['a.md']).toBe('a\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\nc\n');
    expect(result.conflicts).toEqual([
      { path: 'a.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 2, end: 6 }] },
    ]);
  });

  it('add/add with different content under `conflict` is one conflict over the whole file, even with an empty side', async () => {
    const result = await run(
      {},
      { 'a.md': 'same\nL\n', 'e.md': '' },
      { 'a.md': 'same\nR\n', 'e.md': 'r\n' },
      'conflict',
    );
    expect(result.files).toEqual({
      'a.md': '<<<<<<< local\nsame\nL\n=======\nsame\nR\n>>>>>>> remote\n',
      'e.md': '<<<<<<< local\n=======\nr\n>>>>>>> remote\n',
    });
    expect(result.conflicts).toEqual([
      { path: 'a.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 1, end: 7 }] },
      { path: 'e.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 1, end: 4 }] },
    ]);
  });

  it('add/add with different content under `keep` is R’s content, then L’s, their common start once', async () => {
    const result = await run(
      {},
      { 'a.md': 'same\nL\n', 'e.md': '' },
      { 'a.md': 'same\nR\n', 'e.md': 'r\n' },
    );
    expect(result).toEqual({ files: { 'a.md': 'same\nR\nL\n', 'e.md': 'r\n' }, conflicts: [] });
  });

  it('concurrent appends to one file keep both under `keep` and conflict under `conflict`', async () => {
    const files = [{ 'log.md': 'x\n' }, { 'log.md': 'x\nL\n' }, { 'log.md': 'x\nR\n' }] as const;
    expect(await run(...files)).toEqual({ files: { 'log.md': 'x\nR\nL\n' }, conflicts: [] });
    expect(await run(...files, 'conflict')).toEqual({
      files: { 'log.md': 'x\n<<<<<<< local\nL\n=======\nR\n>>>>>>> remote\n' },
      conflicts: [{ path: 'log.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 2, end: 6 }] }],
    });
  });

  it('modify/delete keeps the modified content without markers, from either side', async () => {
    const result = await run(
      { 'a.md': 'a', 'b.md': 'b' },
      { 'a.md': 'local edit' },
      { 'b.md': 'remote edit' },
    );
    expect(result.files).toEqual({ 'a.md': 'local edit', 'b.md': 'remote edit' });
    expect(result.conflicts).toEqual([
      { path: 'a.md', reason: 'MODIFY_DELETE', ranges: [] },
      { path: 'b.md', reason: 'MODIFY_DELETE', ranges: [] },
    ]);
  });

  it('file/directory: R keeps the path and the local side moves to <path>~local', async () => {
    const dirLocal = await run({}, { 'x/y.md': 'local dir' }, { x: 'remote file' });
    expect(dirLocal.files).toEqual({ x: 'remote file', 'x~local/y.md': 'local dir' });
    expect(dirLocal.conflicts).toEqual([{ path: 'x', reason: 'FILE_DIRECTORY', ranges: [] }]);
    const fileLocal = await run(
      {},
      { x: 'local file', 'x~local': 'taken' },
      { 'x/y.md': 'remote dir', 'x~local': 'taken' },
    );
    expect(fileLocal.files).toEqual({
      'x/y.md': 'remote dir',
      'x~local': 'taken',
      'x~local2': 'local file',
    });
    expect(fileLocal.conflicts).toEqual([{ path: 'x', reason: 'FILE_DIRECTORY', ranges: [] }]);
  });

  it('a local file kept by modify/delete moves away from a directory R created in its place', async () => {
    const result = await run({ x: 'base' }, { x: 'local edit' }, { 'x/y.md': 'remote' });
    expect(result.files).toEqual({ 'x/y.md': 'remote', 'x~local': 'local edit' });
    expect(result.conflicts).toEqual([{ path: 'x', reason: 'FILE_DIRECTORY', ranges: [] }]);
  });

  it('a local addition colliding under case folding with R moves to ~local (files and directories)', async () => {
    const result = await run(
      {},
      { 'Straße.md': 'local', 'Notes/a.md': 'la', 'Notes/b.md': 'lb' },
      { 'STRASSE.md': 'remote', 'notes/c.md': 'rc' },
    );
    expect(result.files).toEqual({
      'Notes~local/a.md': 'la',
      'Notes~local/b.md': 'lb',
      'STRASSE.md': 'remote',
      'Straße.md~local': 'local',
      'notes/c.md': 'rc',
    });
    expect(result.conflicts).toEqual([
      { path: 'Notes', reason: 'NAME_COLLISION', ranges: [] },
      { path: 'Straße.md', reason: 'NAME_COLLISION', ranges: [] },
    ]);
  });

  it('a local rename that only changes case is not a collision (R’s old name is gone from the result)', async () => {
    const result = await run({ 'readme.md': 'r' }, { 'README.md': 'r' }, { 'readme.md': 'r' });
    expect(result).toEqual({ files: { 'README.md': 'r' }, conflicts: [] });
  });

  it('reads no blob for paths whose oids agree (10,000 files, one change per side)', async () => {
    const db = openMemoryObjectDb();
    const reads: string[] = [];
    const counting: ObjectDb = {
      ...db,
      readBlob: (oid) => {
        reads.push(oid);
        return db.readBlob(oid);
      },
      writeBlob: (c) => db.writeBlob(c),
    };
    const base: TreeEntries = new Map();
    for (let i = 0; i < 10_000; i++)
      base.set(`d${i % 50}/f${i}.md`, `${(i % 16).toString(16)}`.repeat(40));
    const sharedOid = await db.writeBlob(utf8('x\n'));
    const oldOid = await db.writeBlob(utf8('old\n'));
    base.set('d1/f1.md', oldOid);
    const local = new Map(base).set('d1/f1.md', sharedOid);
    const remote = new Map(base).set('d2/f2.md', sharedOid);
    const { result, conflicts } = await merge3({
      base,
      local,
      remote,
      db: counting,
      foldKey: testFoldKey,
    });
    expect(conflicts).toEqual([]);
    expect(reads).toEqual([]);
    expect(result.get('d1/f1.md')).toBe(sharedOid);
    expect(result.get('d2/f2.md')).toBe(sharedOid);
    expect(await diffstat(base, local, counting)).toEqual([
      { path: 'd1/f1.md', insertions: 1, deletions: 1 },
    ]);
    expect(reads).toEqual([oldOid, sharedOid]);
  });
});

describe('diffstat', () => {
  it('lists added and deleted files always, modified files only with a non-empty line diff, sorted by UTF-8 bytes', async () => {
    const db = openMemoryObjectDb();
    const before = await tree(db, {
      'gone.md': 'a\nb\n',
      'crlf.md': 'a\r\nb\r\n',
      'edit.md': 'a\nb\nc\n',
      'empty-gone.md': '',
      'same.md': 's',
    });
    const after = await tree(db, {
      'crlf.md': 'a\nb\n',
      'edit.md': 'a\nB\nc\nd\n',
      'new-empty.md': '',
      'same.md': 's',
      'ｚ.md': 'z',
      '😀.md': 'e\n',
    });
    expect(await diffstat(before, after, db)).toEqual([
      { path: 'edit.md', insertions: 2, deletions: 1 },
      { path: 'empty-gone.md', insertions: 0, deletions: 0 },
      { path: 'gone.md', insertions: 0, deletions: 2 },
      { path: 'new-empty.md', insertions: 0, deletions: 0 },
      { path: 'ｚ.md', insertions: 1, deletions: 0 },
      { path: '😀.md', insertions: 1, deletions: 0 },
    ]);
  });
});

// Paths with no file/directory overlap, so the properties exercise content rules.
const PATHS = ['a.md', 'b.md', 'd/x.md', 'd/y.md', 'e/f/g.md'] as const;
const LINES = ['one\n', 'two\n', 'three\n', 'four\r\n', 'five'] as const;
const contentArb = fc
  .array(fc.constantFrom(...LINES), { maxLength: 6 })
  .map((lines) => lines.join(''));
const filesArb = fc.dictionary(fc.constantFrom(...PATHS), contentArb);

describe('merge3 properties (fast-check)', () => {
  const merged = async (
    a: Record<string, string>,
    l: Record<string, string>,
    r: Record<string, string>,
  ) => run(a, l, r);

  it('merge(A, A, R) = R and merge(A, L, A) = L, without conflicts', async () => {
    await fc.assert(
      fc.asyncProperty(filesArb, filesArb, async (a, x) => {
        expect(await merged(a, a, x)).toEqual({ files: await normalise(x), conflicts: [] });
        expect(await merged(a, x, a)).toEqual({ files: await normalise(x), conflicts: [] });
      }),
      { numRuns: 60 },
    );
  });

  it('merge(A, X, X) = X', async () => {
    await fc.assert(
      fc.asyncProperty(filesArb, filesArb, async (a, x) => {
        expect(await merged(a, x, x)).toEqual({ files: await normalise(x), conflicts: [] });
      }),
      { numRuns: 60 },
    );
  });

  it('edits to disjoint files commute and merge cleanly', async () => {
    const scenario = fc.record({
      base: filesArb,
      localEdits: filesArb,
      remoteEdits: filesArb,
      split: fc.subarray([...PATHS]),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ base, localEdits, remoteEdits, split }) => {
        const mine = new Set<string>(split);
        const apply = (edits: Record<string, string>, owned: (p: string) => boolean) => {
          const out: Record<string, string> = {};
          for (const p of PATHS) {
            const value = owned(p) ? edits[p] : base[p];
            if (value !== undefined) out[p] = value;
          }
          return out;
        };
        const local = apply(localEdits, (p) => mine.has(p));
        const remote = apply(remoteEdits, (p) => !mine.has(p));
        const lr = await merged(base, local, remote);
        const rl = await merged(base, remote, local);
        expect(lr.conflicts).toEqual([]);
        expect(lr).toEqual(rl);
        for (const p of PATHS)
          expect(lr.files[p]).toBe(mine.has(p) ? localEdits[p] : remoteEdits[p]);
      }),
      { numRuns: 60 },
    );
  });

  it('reports a move exactly when some local path meets a kept R path (brute force), at any depth', async () => {
    // Spellings that fold together (case, ß/ss) and files that are directories elsewhere.
    const pool = [
      'a',
      'A',
      'a/x',
      'A/y',
      'b/a',
      'b/A/z',
      'b/c',
      'Straße',
      'STRASSE/s',
      'q/r/s',
      'q/R',
    ];
    const filesOf = fc.subarray(pool).map((paths) => {
      // A tree is a set of files: drop any path that is another's directory (R is validated).
      const kept = paths.filter((p) => !paths.some((o) => o.startsWith(`${p}/`)));
      return Object.fromEntries(kept.map((p) => [p, p]));
    });
    const prefixes = (path: string) =>
      path.split('/').map((_, i, segs) => segs.slice(0, i + 1).join('/'));
    await fc.assert(
      fc.asyncProperty(filesOf, filesOf, async (local, remoteRaw) => {
        // R spells each folded name one way (contract §4, checked when R is read).
        const remote: Record<string, string> = {};
        const spelling = new Map<string, string>();
        for (const path of Object.keys(remoteRaw)) {
          const clash = prefixes(path).some((p) => {
            const other = spelling.get(testFoldKey(p));
            return other !== undefined && other !== p;
          });
          if (clash) continue;
          remote[path] = path;
          for (const p of prefixes(path)) spelling.set(testFoldKey(p), p);
        }
        const kept = Object.keys(remote);
        const movable = Object.keys(local).filter((p) => !(p in remote));
        const meets = movable.some((path) =>
          prefixes(path).some((q, depth) =>
            kept.some((k) => {
              const other = prefixes(k)[depth];
              if (other === undefined) return false;
              const isDir = q !== path;
              if (isDir && q === k) return true;
              if (!isDir && other === q && k !== q) return true;
              return other !== q && testFoldKey(other) === testFoldKey(q);
            }),
          ),
        );
        const { conflicts } = await run({}, local, remote);
        const moves = conflicts.filter((c) => c.reason !== 'TEXT_CONFLICT');
        expect(moves.length > 0).toBe(meets);
      }),
      { numRuns: 150 },
    );
  });

  it('every reported range is a real marker block of the written content', () => {
    const lines = fc.array(fc.constantFrom(...LINES), { maxLength: 12 });
    fc.assert(
      fc.property(lines, lines, lines, (base, local, remote) => {
        const result = mergeText(utf8(base.join('')), utf8(local.join('')), utf8(remote.join('')));
        expect(findMarkerBlocks(result.content)).toEqual(result.conflicts);
      }),
      { numRuns: 400 },
    );
  });

  it('ranges agree with the scanner when the sides already hold marker lines (nested, stray)', () => {
    // Old blocks, stray openers, separators and closers on any side, CRLF or LF: the new
    // block may nest an old one or be swallowed by a stray opener, and the reported ranges
    // must still be exactly the blocks a later commit's scan refuses.
    const MARKED = [
      ...LINES,
      '<<<<<<< local\n',
      '=======\n',
      '>>>>>>> remote\n',
      '<<<<<<< local\r\n',
      '=======\r\n',
      '>>>>>>> remote',
    ];
    const lines = fc.array(fc.constantFrom(...MARKED), { maxLength: 14 });
    let conflicted = 0;
    fc.assert(
      fc.property(lines, lines, lines, (base, local, remote) => {
        const result = mergeText(utf8(base.join('')), utf8(local.join('')), utf8(remote.join('')));
        if (result.conflicted) conflicted += 1;
        expect(result.conflicts).toEqual(findMarkerBlocks(result.content));
      }),
      { numRuns: 2000 },
    );
    expect(conflicted).toBeGreaterThan(0);
  });

  it('a later conflict around an old block reports the blocks the scanner finds', () => {
    const old = '<<<<<<< local\nmine\n=======\ntheirs\n>>>>>>> remote\n';
    const base = `top\n${old}end\n`;
    const local = `top L\n${old}end\n`;
    const remote = `top R\n${old.replace('theirs', 'theirs R')}end\n`;
    const result = mergeText(utf8(base), utf8(local), utf8(remote));
    expect(result.conflicted).toBe(true);
    expect(result.conflicts).toEqual(findMarkerBlocks(result.content));
    expect(result.conflicts.length).toBeGreaterThan(0);
  });
});

/** Sorts a files record the way {@link contents} returns it. */
async function normalise(files: Record<string, string>): Promise<Record<string, string>> {
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));
}
