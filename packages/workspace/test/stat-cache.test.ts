import { execFile } from 'node:child_process';
import { appendFile, lstat, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FileStamp, loadStatCache } from '../src/index';
import { STAT_CACHE_IMAGES_KEPT } from '../src/stat-cache';
import { tempDir } from './helpers';

const saver = fileURLToPath(new URL('./fixtures/save-stat-cache.ts', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));
let base: { path: string; cleanup: () => Promise<void> };
let file: string;

beforeEach(async () => {
  base = await tempDir('ws-stat-cache-');
  file = join(base.path, 'stat-cache.json');
});

afterEach(async () => {
  await base.cleanup();
});

// Long before the cache file was written: trusted. The fixture records this stamp too.
const OLD: FileStamp = { size: 1, mtimeNs: 1n, ctimeNs: 1n, ino: 1, dev: 1 };
// After any cache file this test can write: never trusted (racily clean).
const FUTURE_NS = (BigInt(Date.now()) + 3_600_000n) * 1_000_000n;
const FUTURE: FileStamp = { ...OLD, mtimeNs: FUTURE_NS, ctimeNs: FUTURE_NS };

/** Another process loads the cache file, sets `path` to `id` for OLD and saves. */
async function saveFromAnotherProcess(path: string, id: string): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    ['--conditions=@slivingdoc/source', '--import', 'tsx', saver, file, path, id],
    { cwd: packageDir },
  );
}

/** The cache file's inode and the journal's content (empty when there is none). */
async function onDisk(): Promise<{ inode: number; journal: string }> {
  const journal = await readFile(`${file}.log`, 'utf8').catch(() => '');
  return { inode: (await lstat(file)).ino, journal };
}

describe('loadStatCache in one process', () => {
  it('lists the ids it holds (the blobs a prune of P keeps)', async () => {
    const cache = await loadStatCache(file);
    cache.set('a.md', OLD, 'a');
    cache.set('b.md', OLD, 'b');
    expect([...cache.ids()].sort()).toEqual(['a', 'b']);
  });

  it('keeps the images of the most recent cache files only; an open cache keeps its own', async () => {
    const first = await loadStatCache(file);
    first.set('a.md', OLD, 'saved');
    await first.save();
    first.set('b.md', OLD, 'unsaved');
    for (let i = 0; i < STAT_CACHE_IMAGES_KEPT; i += 1)
      await loadStatCache(join(base.path, `other-${i}.json`));
    // Evicted: a new load reads the file (which never held the unsaved entry) ...
    const reloaded = await loadStatCache(file);
    expect(reloaded.get('a.md', OLD)).toBe('saved');
    expect(reloaded.get('b.md', OLD)).toBeUndefined();
    // ... while the cache opened before still holds its image.
    expect(first.get('b.md', OLD)).toBe('unsaved');
  });

  it('shares one in-memory image per cache file while the file is unchanged', async () => {
    const first = await loadStatCache(file);
    first.set('a.md', OLD, 'a');
    await first.save();
    first.set('b.md', OLD, 'b'); // not saved: only the in-memory image has it
    const second = await loadStatCache(file);
    expect(second.get('a.md', OLD)).toBe('a');
    expect(second.get('b.md', OLD)).toBe('b');
  });

  it('reads the file again after another process rewrote it', async () => {
    const mine = await loadStatCache(file);
    mine.set('a.md', OLD, 'mine');
    mine.set('b.md', OLD, 'unsaved');
    await mine.save();
    mine.set('b.md', OLD, 'changed, unsaved');
    await saveFromAnotherProcess('a.md', 'theirs');
    const reloaded = await loadStatCache(file);
    expect(reloaded.get('a.md', OLD)).toBe('theirs');
    // The other process loaded what this one had saved, not what it held unsaved.
    expect(reloaded.get('b.md', OLD)).toBe('unsaved');
    expect(reloaded.has('c.md')).toBe(false);
  });

  it('never writes when nothing changed; a change is appended to the journal', async () => {
    const cache = await loadStatCache(file);
    cache.set('a.md', OLD, 'a');
    await cache.save();
    const before = await onDisk();
    cache.set('a.md', OLD, 'a');
    await cache.save();
    await (await loadStatCache(file)).save();
    expect(await onDisk()).toEqual(before);
    cache.set('a.md', OLD, 'a2');
    await cache.save();
    const after = await onDisk();
    expect(after.inode).toBe(before.inode); // the cache file itself is not rewritten
    expect(after.journal).toBe(`\n${JSON.stringify(['a.md', '1:1:1:1:1', 'a2'])}\n`);
  });

  it('saves a confirmed racily clean entry again, so a later save can trust it', async () => {
    const cache = await loadStatCache(file);
    cache.set('a.md', FUTURE, 'a');
    await cache.save();
    const before = await onDisk();
    expect(cache.get('a.md', FUTURE)).toBeUndefined();
    cache.set('a.md', FUTURE, 'a');
    await cache.save();
    expect(await onDisk()).not.toEqual(before);
  });

  it('folds the journal into the cache file once it grows, and drops it', async () => {
    const cache = await loadStatCache(file);
    cache.set('first.md', OLD, 'x');
    await cache.save();
    const { inode: first } = await onDisk();
    for (let i = 0; i < 300; i += 1) {
      cache.set(`n${i}.md`, OLD, `id${i}`);
      await cache.save();
    }
    const folded = await onDisk();
    expect(folded.inode).not.toBe(first);
    const journalLines = folded.journal.split('\n').filter((line) => line !== '').length;
    expect(journalLines).toBeLessThan(300);
    const fromDisk = JSON.parse(await readFile(file, 'utf8')) as { entries: string[] };
    expect(fromDisk.entries.length / 3 + journalLines).toBe(301);
  });

  it('reads the journal over the file in a fresh process, a torn last line skipped', async () => {
    const cache = await loadStatCache(file);
    cache.set('a.md', OLD, 'a');
    await cache.save();
    cache.set('a.md', OLD, 'a2');
    cache.set('b.md', OLD, 'b');
    await cache.save();
    await appendFile(`${file}.log`, '["c.md","1:1:1:1:1","c"'); // a crash mid-append
    await saveFromAnotherProcess('d.md', 'd');
    const reloaded = await loadStatCache(file);
    expect(reloaded.get('a.md', OLD)).toBe('a2');
    expect(reloaded.get('b.md', OLD)).toBe('b');
    expect(reloaded.has('c.md')).toBe(false);
    expect(reloaded.get('d.md', OLD)).toBe('d');
  });

  it('reads a version 1 file, a malformed stored stamp being a miss', async () => {
    const entries = { 'a.md': ['1:1:1:1:1', 'a'], 'b.md': ['1:x:1:1:1', 'b'] };
    await writeFile(file, JSON.stringify({ version: 1, entries }));
    const cache = await loadStatCache(file);
    expect(cache.get('a.md', OLD)).toBe('a');
    expect(cache.has('b.md')).toBe(true);
    expect(cache.get('b.md', OLD)).toBeUndefined();
  });

  it('writes every entry and reads them back from disk, a path named __proto__ included', async () => {
    const cache = await loadStatCache(file);
    for (const path of ['__proto__', 'a.md', 'd/__proto__/b.md'])
      cache.set(path, OLD, `id ${path}`);
    await cache.save();
    // Touching the file changes its stamp: the next load reads it from disk.
    await utimes(file, new Date(), new Date());
    const reloaded = await loadStatCache(file);
    for (const path of ['__proto__', 'a.md', 'd/__proto__/b.md']) {
      expect(reloaded.get(path, OLD)).toBe(`id ${path}`);
    }
    expect(JSON.parse(await readFile(file, 'utf8')).version).toBe(2);
  });
});
