import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createEmbeddedStore,
  createMemoryStore,
  type MemoryStore,
  type ObjectStore,
  runProbe,
  StoreError,
} from '../src';

const dirs: string[] = [];

/** Backoff that records what it would wait instead of waiting. */
function noWait() {
  const waits: number[] = [];
  return { waits, options: { sleep: async (ms: number) => void waits.push(ms), random: () => 0 } };
}

type Op = 'createIfAbsent' | 'get' | 'replaceIfMatch';

/**
 * The store with a fault on the `nth` call (1-based) of `op`: `lose` applies the call and then
 * answers ambiguous, `reset` answers ambiguous with no effect, `5xx` a transient failure.
 */
function faultOnCall(store: MemoryStore, op: Op, nth: number, fault: 'lose' | 'reset' | '5xx') {
  let seen = 0;
  const original = store[op].bind(store) as (...args: unknown[]) => Promise<unknown>;
  const wrapped = async (...args: unknown[]) => {
    seen += 1;
    if (seen !== nth) return original(...args);
    if (fault === 'lose') {
      await original(...args).catch(() => undefined);
      throw new StoreError('ambiguous', `${op}: response lost`, { code: 'ECONNRESET' });
    }
    if (fault === 'reset')
      throw new StoreError('ambiguous', `${op}: reset`, { code: 'ECONNRESET' });
    throw new StoreError('other', `${op}: 503 SlowDown`, { code: 'SlowDown', transient: true });
  };
  return { ...store, [op]: wrapped } as ObjectStore;
}

/** The distinct probe keys the store saw, in order. */
function probeKeys(store: MemoryStore): string[] {
  return [...new Set(store.calls.flatMap((c) => c.keys))];
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('compatibility probe', () => {
  it('passes on the memory store and leaves no probe key behind', async () => {
    const store = createMemoryStore();
    expect(await runProbe(store)).toEqual({ ok: true });
    const probeKey = store.calls[0]!.keys[0]!;
    expect(probeKey).toMatch(/^probe\/[0-9a-f-]{36}$/);
    expect(store.calls.map((c) => c.op)).toEqual([
      'createIfAbsent',
      'createIfAbsent',
      'get',
      'replaceIfMatch',
      'get',
      'replaceIfMatch',
      'get',
      'deleteMany',
    ]);
    expect(await store.get(probeKey)).toBeUndefined();
  });

  it('passes on the embedded store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slivingdoc-probe-'));
    dirs.push(dir);
    expect(await runProbe(await createEmbeddedStore({ dir, prefix: 'p' }))).toEqual({ ok: true });
  });

  /**
   * A memory store offering condition forms `a` and `b` (in use first: `a`), of which its
   * server honours only `honoured`: a right-ETag replace in any other form is refused as if
   * the ETag did not match (what Ceph RGW does with a quoted If-Match).
   */
  function storeWithForms(honoured: string | undefined) {
    const store = createMemoryStore();
    let form = 'a';
    const used: string[] = [];
    const wrapped: ObjectStore = {
      ...store,
      replaceIfMatch: (key, body, etag) => {
        used.push(form);
        if (form !== honoured) return store.replaceIfMatch(key, body, `${etag}-unmatched`);
        return store.replaceIfMatch(key, body, etag);
      },
      conditionForms: {
        candidates: () => [form, form === 'a' ? 'b' : 'a'],
        use: (next) => {
          form = next;
        },
      },
    };
    return { wrapped, used, form: () => form };
  }

  it('tries each condition form the store offers and keeps the first it honours', async () => {
    const { wrapped, used, form } = storeWithForms('b');
    expect(await runProbe(wrapped)).toEqual({ ok: true });
    expect(form()).toBe('b');
    // Form a: wrong-ETag refused, right-ETag refused too; form b: wrong refused, right honoured.
    expect(used).toEqual(['a', 'a', 'b', 'b']);
  });

  it('keeps the form in use when the store honours it', async () => {
    const { wrapped, used, form } = storeWithForms('a');
    expect(await runProbe(wrapped)).toEqual({ ok: true });
    expect(form()).toBe('a');
    expect(used).toEqual(['a', 'a']);
  });

  it('refuses a store that honours a right-ETag replace in none of its forms', async () => {
    const { wrapped } = storeWithForms(undefined);
    expect(await runProbe(wrapped)).toEqual({
      ok: false,
      verdict: 'incompatible',
      reason: 'right-ETag replace refused in every ETag form',
    });
  });

  it('refuses a store that ignores If-None-Match', async () => {
    const verdict = await runProbe(createMemoryStore({ ignorePreconditions: true }));
    expect(verdict).toEqual({
      ok: false,
      verdict: 'incompatible',
      reason: 'second create-if-absent succeeded: the store ignores If-None-Match',
    });
  });

  it('refuses a store that ignores If-Match, and still deletes the probe key', async () => {
    const store = createMemoryStore();
    // The second create is refused as it should be; only the wrong-ETag replace "wins".
    const wrapped = {
      ...store,
      replaceIfMatch: (key: string, body: Uint8Array) =>
        store.drop(key) ?? store.createIfAbsent(key, body),
    };
    const verdict = await runProbe(wrapped);
    expect(verdict).toEqual({
      ok: false,
      verdict: 'incompatible',
      reason: 'wrong-ETag replace succeeded: the store ignores If-Match',
    });
    const probeKey = store.calls[0]!.keys[0]!;
    expect(store.calls.at(-1)).toEqual({ op: 'deleteMany', keys: [probeKey] });
  });

  it('names the failing step and the kind of a definite store error, and deletes the probe key', async () => {
    const store = createMemoryStore();
    store.inject({ op: 'get', action: { type: 'fail', kind: 'access-denied' } });
    expect(await runProbe(store)).toEqual({
      ok: false,
      verdict: 'incompatible',
      reason: 'read back: access-denied',
    });
    expect(store.calls.at(-1)?.op).toBe('deleteMany');
    expect(store.calls.filter((c) => c.op === 'createIfAbsent')).toHaveLength(2);
  });

  it('an unreachable store is retried with backoff, then reported unreachable, not incompatible', async () => {
    const store = createMemoryStore();
    store.inject({
      op: 'createIfAbsent',
      times: 100,
      action: { type: 'fail', kind: 'unreachable' },
    });
    const { waits, options } = noWait();
    expect(await runProbe(store, { ...options, attempts: 5 })).toEqual({
      ok: false,
      verdict: 'unreachable',
      reason: 'no answer could be trusted in 5 attempts; last: create-if-absent: unreachable',
    });
    // Four backoffs between five attempts, doubling; each attempt on its own fresh key.
    expect(waits).toEqual([100, 200, 400, 800]);
    const creates = store.calls.filter((c) => c.op === 'createIfAbsent');
    expect(creates).toHaveLength(5);
    expect(new Set(creates.map((c) => c.keys[0])).size).toBe(5);
    // A create that never reached the store left nothing to delete.
    expect(store.calls.some((c) => c.op === 'deleteMany')).toBe(false);
  });

  it('stops at the time budget even when attempts remain', async () => {
    const store = createMemoryStore();
    store.inject({
      op: 'get',
      times: 100,
      action: { type: 'fail', kind: 'other', transient: true },
    });
    let clock = 0;
    const verdict = await runProbe(store, {
      attempts: 100,
      budgetMs: 10_000,
      now: () => clock,
      random: () => 0,
      sleep: async (ms) => {
        clock += ms + 3_000;
      },
    });
    expect(verdict).toMatchObject({ ok: false, verdict: 'unreachable' });
    // Attempts start at 0, 3.1, 6.3 and 9.7 s, and a fifth at 13.5 s (over 10 s) is the last.
    expect(probeKeys(store)).toHaveLength(5);
  });

  for (const [name, op, nth, fault] of [
    ['a lost response to the first create-if-absent', 'createIfAbsent', 1, 'lose'],
    ['a reset of the first create-if-absent', 'createIfAbsent', 1, 'reset'],
    ['a lost response to the second create-if-absent', 'createIfAbsent', 2, 'lose'],
    ['a 5xx on the read back', 'get', 1, '5xx'],
    ['a reset of the wrong-ETag replace', 'replaceIfMatch', 1, 'reset'],
    ['a throttled read after the wrong-ETag replace', 'get', 2, '5xx'],
    ['a lost response to the right-ETag replace', 'replaceIfMatch', 2, 'lose'],
    ['a throttled read after the replace', 'get', 3, '5xx'],
  ] as const) {
    it(`${name} restarts the probe on a fresh key and passes; no probe key is left`, async () => {
      const store = createMemoryStore();
      const { waits, options } = noWait();
      expect(await runProbe(faultOnCall(store, op, nth, fault), options)).toEqual({ ok: true });
      expect(waits).toEqual([100]);
      const keys = probeKeys(store);
      expect(keys).toHaveLength(2);
      for (const key of keys) expect(await store.get(key)).toBeUndefined();
      // Both attempts' keys were deleted, the interrupted one included.
      const deleted = store.calls.filter((c) => c.op === 'deleteMany').flatMap((c) => c.keys);
      expect(deleted).toEqual(keys);
    });
  }

  it('a 5xx on the key delete is retried; the verdict stands', async () => {
    const store = createMemoryStore();
    store.inject({ op: 'deleteMany', action: { type: 'fail', kind: 'other', transient: true } });
    const { options } = noWait();
    expect(await runProbe(store, options)).toEqual({ ok: true });
    const key = probeKeys(store)[0]!;
    expect(store.calls.filter((c) => c.op === 'deleteMany')).toHaveLength(2);
    expect(await store.get(key)).toBeUndefined();
  });

  it('a definite refusal after an interrupted attempt is still INCOMPATIBLE, and both keys go', async () => {
    const store = createMemoryStore({ ignorePreconditions: true });
    store.inject({ op: 'createIfAbsent', action: { type: 'fail', kind: 'unreachable' } });
    const { options } = noWait();
    expect(await runProbe(store, options)).toEqual({
      ok: false,
      verdict: 'incompatible',
      reason: 'second create-if-absent succeeded: the store ignores If-None-Match',
    });
    for (const key of probeKeys(store)) expect(await store.get(key)).toBeUndefined();
  });

  describe('credentials that may not write', () => {
    /** The memory store whose `op` answers every call with a 403 carrying the store's `code`. */
    function refusing(store: MemoryStore, ops: Op[], code: string): ObjectStore {
      const refused = Object.fromEntries(
        ops.map((op) => [
          op,
          async () => {
            throw new StoreError('access-denied', `${op}: 403 ${code}`, { code });
          },
        ]),
      );
      return { ...store, ...refused } as ObjectStore;
    }

    it('a write refused with AccessDenied while current reads is a reader: no further write, no delete', async () => {
      const store = createMemoryStore();
      const result = await runProbe(refusing(store, ['createIfAbsent'], 'AccessDenied'));
      expect(result).toEqual({
        ok: false,
        verdict: 'read-only',
        reason: 'create-if-absent: access-denied (AccessDenied)',
        code: 'AccessDenied',
      });
      // The refused create is not in the memory store's log; the read of `current` is all.
      expect(store.calls).toEqual([{ op: 'get', keys: ['current'] }]);
    });

    it('credentials refused both the write and the read of current are denied, not incompatible', async () => {
      const store = createMemoryStore();
      const result = await runProbe(refusing(store, ['createIfAbsent', 'get'], 'AccessDenied'));
      expect(result).toEqual({
        ok: false,
        verdict: 'denied',
        reason:
          'create-if-absent: access-denied (AccessDenied); read current: access-denied (AccessDenied)',
        code: 'AccessDenied',
      });
    });

    it.each([
      'QuotaExceeded',
      'SignatureDoesNotMatch',
      'RequestTimeTooSkewed',
      'InvalidAccessKeyId',
    ])('a 403 %s stays what it is: a failure of the probe, never a reader', async (code) => {
      const store = createMemoryStore();
      expect(await runProbe(refusing(store, ['createIfAbsent'], code))).toEqual({
        ok: false,
        verdict: 'incompatible',
        reason: `create-if-absent: access-denied (${code})`,
        code,
      });
    });
  });
});
