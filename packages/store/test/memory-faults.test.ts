import { describe, expect, it } from 'vitest';
import { createMemoryStore, incrementKey, isStoreError, newUuidV7 } from '../src';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const decode = (b: Uint8Array | undefined): string | undefined =>
  b === undefined ? undefined : new TextDecoder().decode(b);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('memory store fault injection and call log', () => {
  it('logs every call in order, so a test can assert zero store calls', async () => {
    const store = createMemoryStore();
    expect(store.calls).toEqual([]);
    await store.get('current');
    await store.createIfAbsent('current', text('a'));
    await store.list('packs/');
    expect(store.calls).toEqual([
      { op: 'get', keys: ['current'] },
      { op: 'createIfAbsent', keys: ['current'] },
      { op: 'list', keys: [] },
    ]);
    store.clearCalls();
    expect(store.calls).toEqual([]);
  });

  it('fails the next matching call with the injected kind and no effect', async () => {
    const store = createMemoryStore();
    store.inject({ op: 'createIfAbsent', action: { type: 'fail', kind: 'unreachable' } });
    const err = await rejection(store.createIfAbsent('current', text('a')));
    expect(isStoreError(err, 'unreachable')).toBe(true);
    expect(await store.get('current')).toBeUndefined();
    await store.createIfAbsent('current', text('a'));
    expect(decode((await store.get('current'))?.body)).toBe('a');
  });

  it('forces a 412 on demand, for the given number of calls and key only', async () => {
    const store = createMemoryStore();
    const { etag } = await store.createIfAbsent('current', text('a'));
    store.inject({
      op: 'replaceIfMatch',
      key: 'current',
      times: 2,
      action: { type: 'precondition-failed' },
    });
    for (let i = 0; i < 2; i++) {
      expect(
        isStoreError(
          await rejection(store.replaceIfMatch('current', text('b'), etag)),
          'precondition-failed',
        ),
      ).toBe(true);
    }
    await store.replaceIfMatch('current', text('b'), etag);
    expect(decode((await store.get('current'))?.body)).toBe('b');
  });

  it('applies the effect and then loses the response as ambiguous', async () => {
    const store = createMemoryStore();
    const { etag } = await store.createIfAbsent('current', text('a'));
    store.inject({ op: 'replaceIfMatch', action: { type: 'lose-response' } });
    const err = await rejection(store.replaceIfMatch('current', text('b'), etag));
    expect(isStoreError(err, 'ambiguous')).toBe(true);
    expect(decode((await store.get('current'))?.body)).toBe('b');
  });

  it('settles a lost putImmutable response by reading the pack back', async () => {
    const store = createMemoryStore();
    const key = incrementKey(2n, newUuidV7());
    store.inject({ op: 'putImmutable', action: { type: 'lose-response' } });
    await store.putImmutable(key, text('pack'), { 'slivingdoc-kind': 'increment' });
    expect(store.metadataOf(key)).toEqual({ 'slivingdoc-kind': 'increment' });
    expect(store.calls.map((c) => c.op)).toEqual(['putImmutable']);
  });

  it('keeps an ambiguous putImmutable ambiguous when the read-back cannot prove it', async () => {
    const store = createMemoryStore();
    const key = incrementKey(2n, newUuidV7());
    store.inject({ op: 'putImmutable', action: { type: 'fail', kind: 'ambiguous' } });
    expect(
      isStoreError(await rejection(store.putImmutable(key, text('pack'), {})), 'ambiguous'),
    ).toBe(true);
  });

  it('delays a call until the test releases it', async () => {
    const store = createMemoryStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    store.inject({ op: 'createIfAbsent', action: { type: 'delay', until: gate } });
    const slow = store.createIfAbsent('current', text('slow'));
    await store.createIfAbsent('current', text('fast'));
    release();
    expect(isStoreError(await rejection(slow), 'precondition-failed')).toBe(true);
    expect(decode((await store.get('current'))?.body)).toBe('fast');
  });

  it('drops a stored object before a call, as a vanished pack', async () => {
    const store = createMemoryStore();
    const key = incrementKey(2n, newUuidV7());
    await store.putImmutable(key, text('pack'), {});
    store.inject({ op: 'getStream', action: { type: 'drop', key } });
    expect(await store.getStream(key)).toBeUndefined();
    await store.putImmutable(key, text('pack'), {});
    store.drop(key);
    expect(await store.get(key)).toBeUndefined();
  });

  it('deletes in batches of at most 1,000 keys', async () => {
    const store = createMemoryStore();
    const keys = Array.from({ length: 2500 }, (_, i) => incrementKey(BigInt(i + 2), newUuidV7()));
    await store.deleteMany(keys);
    expect(store.calls.map((c) => c.keys.length)).toEqual([1000, 1000, 500]);
  });
});
