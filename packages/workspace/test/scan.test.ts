import { execFileSync } from 'node:child_process';
import {
  link,
  mkdir,
  readdir,
  rename,
  symlink,
  truncate,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emptyStatCache, loadStatCache, MAX_FILE_BYTES, scanNotebook } from '../src/index';
import { tempDir, writeDeepFile, writeTree } from './helpers';

let base: { path: string; cleanup: () => Promise<void> };
let L: string;
let outside: string;
const servers: Server[] = [];

beforeEach(async () => {
  base = await tempDir('ws-scan-');
  L = join(base.path, 'L');
  outside = join(base.path, 'outside');
  await mkdir(L);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.md'), 'SECRET');
});

afterEach(async () => {
  for (const server of servers.splice(0)) server.close();
  await base.cleanup();
});

const dec = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('scanNotebook', () => {
  it('returns valid files with their content, sorted by UTF-8 bytes, ignoring empty directories', async () => {
    await writeTree(L, { 'b.md': 'b\r\n', 'a/x.md': '', 'a/y/z.md': 'zz', 'Z.md': 'no newline' });
    await mkdir(join(L, 'empty/inner'), { recursive: true });
    const { files, problems } = await scanNotebook(L, { cache: emptyStatCache() });
    expect(problems).toEqual([]);
    expect([...files.keys()]).toEqual(['Z.md', 'a/x.md', 'a/y/z.md', 'b.md']);
    expect(dec(await files.get('b.md')!.read())).toBe('b\r\n');
    expect(dec(await files.get('a/x.md')!.read())).toBe('');
  });

  it('orders by UTF-8 bytes where UTF-16 code units disagree (a character above U+FFFF)', async () => {
    // UTF-16 puts the surrogate pair of U+1F600 (0xD83D…) before U+FF5A; UTF-8 puts F0… after EF….
    await writeTree(L, { '\u{1F600}.md': 'x', '\uFF5A.md': 'y', 'a.md': 'z' });
    const { files } = await scanNotebook(L, { cache: emptyStatCache() });
    expect([...files.keys()]).toEqual(['a.md', '\uFF5A.md', '\u{1F600}.md']);
  });

  it('tells a name with U+FFFD in it from a name that is not UTF-8', async () => {
    await writeTree(L, { 'sub/valid-\uFFFD.md': 'x', 'sub/also-valid-\uFFFD.md': 'y' });
    await writeFile(Buffer.from(`${L}/sub/bad-\xff.md`, 'latin1'), 'z');
    const { files, problems } = await scanNotebook(L, { cache: emptyStatCache() });
    expect([...files.keys()]).toEqual(['sub/also-valid-\uFFFD.md', 'sub/valid-\uFFFD.md']);
    expect(problems).toEqual([{ path: 'sub/bad-\uFFFD.md', reason: 'INVALID_NAME', ranges: [] }]);
  });

  it('reads hard links as independent files', async () => {
    await writeTree(L, { 'a.md': 'same' });
    await link(join(L, 'a.md'), join(L, 'b.md'));
    const { files, problems } = await scanNotebook(L, { cache: emptyStatCache() });
    expect(problems).toEqual([]);
    expect(dec(await files.get('b.md')!.read())).toBe('same');
  });

  it('reports every invalid entry in one call and never follows a link', async () => {
    await writeTree(L, {
      'ok.md': 'fine',
      'CON.txt': 'x',
      'a.': 'x',
      'a ': 'x',
      'Straße.md': 'x',
      'STRASSE.md': 'y',
      'Docs/one.md': 'x',
      'docs/two.md': 'x',
      'Cafe\u0301.md': 'nfd',
      'bad.md': Buffer.from([0x61, 0xff, 0x62]),
      'zero.md': 'a\u0000b',
      '.git/config': 'x',
    });
    await writeFile(Buffer.from(`${L}/name-\xff.md`, 'latin1'), 'x');
    await symlink(join(outside, 'secret.md'), join(L, 'link.md'));
    await symlink(outside, join(L, 'linkdir'));
    execFileSync('mkfifo', [join(L, 'fifo')]);
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(join(L, 'sock'), resolve));
    await writeFile(join(L, 'big.md'), '');
    await truncate(join(L, 'big.md'), MAX_FILE_BYTES + 1);
    await writeFile(join(L, 'limit.md'), Buffer.alloc(MAX_FILE_BYTES, 'a'));

    const { files, problems } = await scanNotebook(L, { cache: emptyStatCache() });
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.reason]));
    expect(byPath).toEqual({
      '.git': 'INVALID_NAME',
      'CON.txt': 'INVALID_NAME',
      'Cafe\u0301.md': 'INVALID_NAME',
      Docs: 'NAME_COLLISION',
      'STRASSE.md': 'NAME_COLLISION',
      'Straße.md': 'NAME_COLLISION',
      'a ': 'INVALID_NAME',
      'a.': 'INVALID_NAME',
      'bad.md': 'NOT_UTF8',
      'big.md': 'FILE_TOO_LARGE',
      docs: 'NAME_COLLISION',
      fifo: 'SPECIAL_FILE',
      'link.md': 'SYMLINK',
      linkdir: 'SYMLINK',
      'name-\ufffd.md': 'INVALID_NAME',
      'zero.md': 'CONTAINS_NUL',
      sock: 'SPECIAL_FILE',
    });
    expect(problems.every((p) => p.ranges.length === 0)).toBe(true);
    expect([...files.keys()].sort()).toEqual(['Docs/one.md', 'docs/two.md', 'limit.md', 'ok.md']);
    for (const file of files.values()) expect(dec(await file.read())).not.toContain('SECRET');
  }, 60_000);

  it('reports a path whose absolute form exceeds 4,095 bytes as PATH_TOO_DEEP', async () => {
    const segments = Array.from({ length: 16 }, (_, i) => `${i}`.padEnd(254, 'd'));
    await writeDeepFile(L, segments, 'deep.md', 'x');
    await writeDeepFile(L, [segments[0]!.replace(/^0/, 'z')], 'shallow.md', 'y');
    const { files, problems } = await scanNotebook(L, { cache: emptyStatCache() });
    expect(problems).toEqual([
      { path: `${segments.join('/')}/deep.md`, reason: 'PATH_TOO_DEEP', ranges: [] },
    ]);
    expect(files.size).toBe(1);
  });

  it('ignores and removes stale .slivingdoc-<uuid>.tmp files', async () => {
    const temp = '.slivingdoc-0f8fad5b-d9cb-469f-a165-70867728950e.tmp';
    await writeTree(L, { [temp]: 'half', [`sub/${temp}`]: 'half', 'sub/a.md': 'a' });
    const { files, problems } = await scanNotebook(L, { cache: emptyStatCache() });
    expect(problems).toEqual([]);
    expect([...files.keys()]).toEqual(['sub/a.md']);
    expect(await readdir(L)).toEqual(['sub']);
    expect(await readdir(join(L, 'sub'))).toEqual(['a.md']);
  });

  it('refuses L itself being a symlink', async () => {
    await symlink(outside, join(base.path, 'Llink'));
    await expect(
      scanNotebook(join(base.path, 'Llink'), { cache: emptyStatCache() }),
    ).rejects.toMatchObject({
      code: 'ENOTDIR',
    });
  });
});

describe('scanNotebook with the stat cache', () => {
  it('hands back the stored id for an unchanged file and misses after any change', async () => {
    await writeTree(L, { 'a.md': 'one', 'b.md': 'two' });
    const old = new Date(Date.now() - 60_000);
    await utimes(join(L, 'a.md'), old, old);
    await utimes(join(L, 'b.md'), old, old);
    const cacheFile = join(base.path, 'stat-cache.json');
    const cache = await loadStatCache(cacheFile);
    const cold = await scanNotebook(L, { cache });
    expect(cold.files.get('a.md')!.cachedId).toBeUndefined();
    for (const file of cold.files.values()) cache.set(file.path, file.stamp, `id-of-${file.path}`);
    await cache.save();

    const reloaded = await loadStatCache(cacheFile);
    await writeFile(join(L, 'b.md'), 'TWO'); // same size, new content
    await utimes(join(L, 'b.md'), old, old); // even with the old mtime: ctime moved
    const warm = await scanNotebook(L, { cache: reloaded });
    expect(warm.files.get('a.md')!.cachedId).toBe('id-of-a.md');
    expect(dec(await warm.files.get('a.md')!.read())).toBe('one');
    expect(warm.files.get('b.md')!.cachedId).toBeUndefined();
    expect(dec(await warm.files.get('b.md')!.read())).toBe('TWO');
  });

  it('does not trust an entry written in the same tick as the cache (racily clean)', async () => {
    await writeTree(L, { 'a.md': 'one' });
    const cache = await loadStatCache(join(base.path, 'stat-cache.json'));
    const first = await scanNotebook(L, { cache });
    cache.set('a.md', first.files.get('a.md')!.stamp, 'id');
    await cache.save();
    // Make the file look as new as the cache file itself.
    const now = new Date();
    await utimes(join(base.path, 'stat-cache.json'), now, now);
    await utimes(join(L, 'a.md'), now, now);
    const stamp = (await scanNotebook(L, { cache: emptyStatCache() })).files.get('a.md')!.stamp;
    cache.set('a.md', stamp, 'id');
    await cache.save();
    await utimes(
      join(L, 'a.md'),
      new Date(now.getTime() + 3_600_000),
      new Date(now.getTime() + 3_600_000),
    );
    const later = await scanNotebook(L, {
      cache: await loadStatCache(join(base.path, 'stat-cache.json')),
    });
    expect(later.files.get('a.md')!.cachedId).toBeUndefined();
  });

  it('never serves a changed file from a cache kept in memory across scans', async () => {
    await writeTree(L, { 'edited.md': 'one', 'replaced.md': 'one', 'kept.md': 'one' });
    const old = new Date(Date.now() - 60_000);
    for (const name of ['edited.md', 'replaced.md', 'kept.md'])
      await utimes(join(L, name), old, old);
    const cache = await loadStatCache(join(base.path, 'stat-cache.json'));
    const cold = await scanNotebook(L, { cache });
    for (const file of cold.files.values()) cache.set(file.path, file.stamp, `id-of-${file.path}`);
    await cache.save();
    // Same size and mtime: an edit in place (ctime moves) and a new inode renamed over the file.
    await writeFile(join(L, 'edited.md'), 'two');
    await utimes(join(L, 'edited.md'), old, old);
    await writeFile(join(outside, 'new.md'), 'two');
    await utimes(join(outside, 'new.md'), old, old);
    await rename(join(outside, 'new.md'), join(L, 'replaced.md'));
    const warm = await scanNotebook(L, { cache });
    expect(warm.files.get('kept.md')!.cachedId).toBe('id-of-kept.md');
    for (const name of ['edited.md', 'replaced.md']) {
      expect(warm.files.get(name)!.cachedId).toBeUndefined();
      expect(dec(await warm.files.get(name)!.read())).toBe('two');
    }
  });

  it('a cached file changed after the scan is refused by read()', async () => {
    await writeTree(L, { 'a.md': 'one' });
    const old = new Date(Date.now() - 60_000);
    await utimes(join(L, 'a.md'), old, old);
    const cacheFile = join(base.path, 'stat-cache.json');
    const cache = await loadStatCache(cacheFile);
    const cold = await scanNotebook(L, { cache });
    cache.set('a.md', cold.files.get('a.md')!.stamp, 'id');
    await cache.save();
    const warm = await scanNotebook(L, { cache: await loadStatCache(cacheFile) });
    await writeFile(join(L, 'a.md'), 'changed');
    await expect(warm.files.get('a.md')!.read()).rejects.toMatchObject({
      name: 'ConcurrentEditError',
    });
  });
});
