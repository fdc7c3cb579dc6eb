import { execFile } from 'node:child_process';
import { lstat, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FileStamp, loadStatCache } from '../src/index';
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

const inode = async () => (await lstat(file)).ino;

describe('loadStatCache in one process', () => {
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

  it('never rewrites the cache file when nothing changed', async () => {
    const cache = await loadStatCache(file);
    cache.set('a.md', OLD, 'a');
    await cache.save();
    const written = await inode();
    cache.set('a.md', OLD, 'a');
    await cache.save();
    await (await loadStatCache(file)).save();
    expect(await inode()).toBe(written);
    cache.set('a.md', OLD, 'a2');
    await cache.save();
    expect(await inode()).not.toBe(written);
  });

  it('saves a confirmed racily clean entry again, so a later save can trust it', async () => {
    const cache = await loadStatCache(file);
    cache.set('a.md', FUTURE, 'a');
    await cache.save();
    const written = await inode();
    expect(cache.get('a.md', FUTURE)).toBeUndefined();
    cache.set('a.md', FUTURE, 'a');
    await cache.save();
    expect(await inode()).not.toBe(written);
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
