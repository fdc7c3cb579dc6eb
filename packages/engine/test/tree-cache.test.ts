import type { ObjectDb } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import { describe, expect, it, vi } from 'vitest';
import { TreeCache } from '../src/context';

describe('TreeCache', () => {
  it('serves a remembered tree without reading it and counts it as validated', async () => {
    const db = openMemoryObjectDb();
    const entries = new Map([['a.md', await db.writeBlob(Buffer.from('a\n'))]]);
    const tree = await db.writeTree(entries);
    const cache = new TreeCache(2);
    const refusing = {
      readTree: () => Promise.reject(new Error('read back')),
    } as unknown as ObjectDb;
    await expect(cache.read(refusing, tree)).rejects.toThrow('read back');
    expect(cache.isValidated(tree)).toBe(false);
    cache.remember(tree, entries);
    expect(await cache.read(refusing, tree)).toBe(entries);
    expect(cache.isValidated(tree)).toBe(true);
  });

  it('keeps at most its capacity, dropping the least recently used', async () => {
    const db = openMemoryObjectDb();
    const trees: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const entries = new Map([[`f${i}.md`, await db.writeBlob(Buffer.from(`${i}\n`))]]);
      trees.push(await db.writeTree(entries));
    }
    const cache = new TreeCache(2);
    const [t0, t1, t2] = trees as [string, string, string];
    cache.remember(t0, await db.readTree(t0));
    cache.remember(t1, await db.readTree(t1));
    await cache.read(db, t0);
    cache.remember(t2, await db.readTree(t2));
    const refusing = {
      readTree: () => Promise.reject(new Error('evicted')),
    } as unknown as ObjectDb;
    expect(await cache.read(refusing, t0)).toEqual(await db.readTree(t0));
    await expect(cache.read(refusing, t1)).rejects.toThrow('evicted');
  });

  it('drops its trees once unused for idleMs, and keeps which ones were validated', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const db = openMemoryObjectDb();
      const entries = new Map([['a.md', await db.writeBlob(Buffer.from('a\n'))]]);
      const tree = await db.writeTree(entries);
      const cache = new TreeCache(2, 1000);
      const refusing = {
        readTree: () => Promise.reject(new Error('read back')),
      } as unknown as ObjectDb;
      cache.remember(tree, entries);
      vi.advanceTimersByTime(900);
      expect(await cache.read(refusing, tree)).toBe(entries);
      vi.advanceTimersByTime(999);
      expect(await cache.read(refusing, tree)).toBe(entries);
      vi.advanceTimersByTime(1000);
      await expect(cache.read(refusing, tree)).rejects.toThrow('read back');
      expect(cache.isValidated(tree)).toBe(true);
      expect(await cache.read(db, tree)).toEqual(entries);
    } finally {
      vi.useRealTimers();
    }
  });
});
