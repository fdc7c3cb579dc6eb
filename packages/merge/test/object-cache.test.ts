import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { GitObject } from '../src/model/object-format';
import { ObjectCache } from '../src/storage/object-cache';

const blob = (text: string): GitObject => ({ type: 'blob', content: Buffer.from(text) });

describe('ObjectCache', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps its entries while used and drops them all once unused for idleMs', () => {
    const cache = new ObjectCache(1024, 1000);
    cache.set('a', blob('aaaa'));
    cache.set('b', blob('bb'));
    expect(cache.bytes).toBe(6);
    // Each hit within the window postpones the release.
    for (let i = 0; i < 3; i += 1) {
      vi.advanceTimersByTime(900);
      expect(cache.get('a')?.content).toEqual(Buffer.from('aaaa'));
    }
    vi.advanceTimersByTime(999);
    expect(cache.bytes).toBe(6);
    vi.advanceTimersByTime(1);
    expect(cache.bytes).toBe(0);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeUndefined();
    // Filled again after a release, it releases again.
    cache.set('a', blob('aaaa'));
    expect(cache.get('a')).toBeDefined();
    vi.advanceTimersByTime(1000);
    expect(cache.get('a')).toBeUndefined();
  });

  it('still evicts the least recently used beyond its byte limit', () => {
    const cache = new ObjectCache(8, 1000);
    cache.set('a', blob('aa'));
    cache.set('b', blob('bb'));
    cache.get('a');
    cache.set('c', blob('cc'));
    cache.set('d', blob('dd'));
    cache.set('e', blob('ee'));
    expect(cache.bytes).toBe(8);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
  });
});
