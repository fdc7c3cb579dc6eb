import {
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConcurrentEditError,
  emptyStatCache,
  type FileChange,
  type FileStamp,
  InvalidChangeError,
  scanNotebook,
  writeChanges,
} from '../src/index';
import { tempDir, writeTree } from './helpers';

let base: { path: string; cleanup: () => Promise<void> };
let L: string;
let outside: string;

beforeEach(async () => {
  base = await tempDir('ws-write-');
  L = join(base.path, 'L');
  outside = join(base.path, 'outside');
  await mkdir(L);
  await mkdir(outside);
});

afterEach(async () => {
  await base.cleanup();
});

async function stamps(): Promise<Map<string, FileStamp>> {
  const { files } = await scanNotebook(L, { cache: emptyStatCache() });
  return new Map([...files].map(([path, file]) => [path, file.stamp]));
}

async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const full = join(entry.parentPath, entry.name);
      out[full.slice(dir.length + 1)] = await readFile(full, 'utf8');
    }
  }
  return out;
}

const put = (path: string, content: string, expect: FileStamp | 'absent'): FileChange => ({
  path,
  content: Buffer.from(content),
  expect,
});

describe('writeChanges', () => {
  it('adds, replaces and deletes files and removes directories left empty', async () => {
    await writeTree(L, {
      'keep.md': 'k',
      'old/deep/gone.md': 'g',
      'old/deep/also.md': 'a',
      'x.md': 'x',
    });
    const s = await stamps();
    await writeChanges(L, [
      put('new/dir/n.md', 'new', 'absent'),
      put('x.md', 'X2', s.get('x.md')!),
      { path: 'old/deep/gone.md', content: null, expect: s.get('old/deep/gone.md')! },
      { path: 'old/deep/also.md', content: null, expect: s.get('old/deep/also.md')! },
    ]);
    expect(await tree(L)).toEqual({ 'keep.md': 'k', 'new/dir/n.md': 'new', 'x.md': 'X2' });
    expect(await readdir(L)).toEqual(['keep.md', 'new', 'x.md']);
  });

  it('never writes into an existing inode: a hard link to the old file keeps the old bytes', async () => {
    await writeTree(L, { 'a.md': 'before' });
    await link(join(L, 'a.md'), join(outside, 'witness'));
    const s = await stamps();
    await writeChanges(L, [put('a.md', 'after', s.get('a.md')!)]);
    expect(await readFile(join(L, 'a.md'), 'utf8')).toBe('after');
    expect(await readFile(join(outside, 'witness'), 'utf8')).toBe('before');
    expect((await stat(join(L, 'a.md'))).ino).not.toBe((await stat(join(outside, 'witness'))).ino);
  });

  it('writes files 0644 and directories 0755 (umask 022) and leaves no temp file', async () => {
    await writeChanges(L, [put('d/e/f.md', 'x', 'absent')]);
    expect((await stat(join(L, 'd/e/f.md'))).mode & 0o777).toBe(0o644 & ~process.umask());
    expect((await stat(join(L, 'd/e'))).mode & 0o777).toBe(0o755 & ~process.umask());
    expect(await readdir(join(L, 'd/e'))).toEqual(['f.md']);
  });

  it('handles a file becoming a directory and a directory becoming a file in one call', async () => {
    await writeTree(L, { a: 'file a', 'b/inner.md': 'in b' });
    const s = await stamps();
    await writeChanges(L, [
      { path: 'a', content: null, expect: s.get('a')! },
      put('a/child.md', 'now a dir', 'absent'),
      { path: 'b/inner.md', content: null, expect: s.get('b/inner.md')! },
      put('b', 'now a file', 'absent'),
    ]);
    expect(await tree(L)).toEqual({ 'a/child.md': 'now a dir', b: 'now a file' });
  });

  it('refuses a stale stamp before touching anything', async () => {
    await writeTree(L, { 'a.md': 'one', 'b.md': 'two' });
    const s = await stamps();
    await writeFile(join(L, 'b.md'), 'edited by the user');
    const error = await writeChanges(L, [
      put('a.md', 'ONE', s.get('a.md')!),
      put('b.md', 'TWO', s.get('b.md')!),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConcurrentEditError);
    expect((error as ConcurrentEditError).paths).toEqual(['b.md']);
    expect(await tree(L)).toEqual({ 'a.md': 'one', 'b.md': 'edited by the user' });
  });

  it('refuses to replace a file that appeared where absence was expected', async () => {
    await writeTree(L, { 'c.md': 'created by the user' });
    await expect(writeChanges(L, [put('c.md', 'ours', 'absent')])).rejects.toBeInstanceOf(
      ConcurrentEditError,
    );
    expect(await readFile(join(L, 'c.md'), 'utf8')).toBe('created by the user');
  });

  it('refuses to delete a file the user changed', async () => {
    await writeTree(L, { 'a.md': 'one' });
    const s = await stamps();
    await writeFile(join(L, 'a.md'), 'two');
    await expect(
      writeChanges(L, [{ path: 'a.md', content: null, expect: s.get('a.md')! }]),
    ).rejects.toBeInstanceOf(ConcurrentEditError);
    expect(await readFile(join(L, 'a.md'), 'utf8')).toBe('two');
  });

  it('never follows a symlink put in place of a directory of L', async () => {
    await writeTree(L, { 'd/a.md': 'a' });
    const s = await stamps();
    await rename(join(L, 'd'), join(L, 'd.real'));
    await symlink(outside, join(L, 'd'));
    await expect(writeChanges(L, [put('d/new.md', 'x', 'absent')])).rejects.toBeInstanceOf(
      ConcurrentEditError,
    );
    await expect(
      writeChanges(L, [{ path: 'd/a.md', content: null, expect: s.get('d/a.md')! }]),
    ).rejects.toBeInstanceOf(ConcurrentEditError);
    expect(await readdir(outside)).toEqual([]);
    expect((await lstat(join(L, 'd'))).isSymbolicLink()).toBe(true);
  });

  it('returns the stamp of every written file, equal to what a fresh scan sees', async () => {
    await writeTree(L, { 'a.md': 'a' });
    const s = await stamps();
    const changes = Array.from({ length: 40 }, (_, i) =>
      put(`d${i % 3}/f${i}.md`, `${i}`, 'absent'),
    );
    const written = await writeChanges(L, [...changes, put('a.md', 'A', s.get('a.md')!)]);
    const after = await stamps();
    expect(written.map((w) => w.path).sort()).toEqual([...after.keys()].sort());
    for (const { path, stamp } of written) expect(stamp).toEqual(after.get(path));
  });

  it('writes nothing, temp files included, when one target of many changed before the call', async () => {
    await writeTree(L, { 'm.md': 'm' });
    const s = await stamps();
    await writeFile(join(L, 'm.md'), 'edited by the user');
    await expect(
      writeChanges(L, [
        put('z.md', 'z', 'absent'),
        put('m.md', 'M', s.get('m.md')!),
        put('a.md', 'a', 'absent'),
      ]),
    ).rejects.toBeInstanceOf(ConcurrentEditError);
    expect(await tree(L)).toEqual({ 'm.md': 'edited by the user' });
  });

  it('never replaces a symlink file target', async () => {
    await writeFile(join(outside, 'target'), 'outside');
    await symlink(join(outside, 'target'), join(L, 'a.md'));
    await expect(writeChanges(L, [put('a.md', 'x', 'absent')])).rejects.toBeInstanceOf(
      ConcurrentEditError,
    );
    expect(await readFile(join(outside, 'target'), 'utf8')).toBe('outside');
  });

  it.each(['../escape.md', '/abs.md', 'a/./b.md', 'CON.txt', 'a.', 'x/.git/config', ''])(
    'refuses the invalid notebook path %j',
    async (path) => {
      await expect(writeChanges(L, [put(path, 'x', 'absent')])).rejects.toBeInstanceOf(
        InvalidChangeError,
      );
      expect(await readdir(base.path)).toEqual(['L', 'outside']);
      expect(await readdir(L)).toEqual([]);
    },
  );
});
