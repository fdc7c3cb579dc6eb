import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedStore, createMemoryStore, runProbe } from '../src';

const dirs: string[] = [];
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

  it('refuses a store that ignores If-None-Match', async () => {
    const verdict = await runProbe(createMemoryStore({ ignorePreconditions: true }));
    expect(verdict).toEqual({
      ok: false,
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
      reason: 'wrong-ETag replace succeeded: the store ignores If-Match',
    });
    const probeKey = store.calls[0]!.keys[0]!;
    expect(store.calls.at(-1)).toEqual({ op: 'deleteMany', keys: [probeKey] });
  });

  it('names the failing step and the kind of store error, and deletes the probe key', async () => {
    const store = createMemoryStore();
    store.inject({ op: 'get', action: { type: 'fail', kind: 'access-denied' } });
    expect(await runProbe(store)).toEqual({ ok: false, reason: 'read back: access-denied' });
    expect(store.calls.at(-1)?.op).toBe('deleteMany');
  });

  it('reports a store that cannot even create the probe key', async () => {
    const store = createMemoryStore();
    store.inject({ op: 'createIfAbsent', action: { type: 'fail', kind: 'unreachable' } });
    expect(await runProbe(store)).toEqual({ ok: false, reason: 'create-if-absent: unreachable' });
    expect(store.calls.map((c) => c.op)).toEqual(['createIfAbsent']);
  });

  it('treats an ambiguous answer to a conditional write as a failure, never a pass', async () => {
    const store = createMemoryStore();
    store.inject({ op: 'replaceIfMatch', action: { type: 'fail', kind: 'ambiguous' } });
    expect(await runProbe(store)).toEqual({ ok: false, reason: 'wrong-ETag replace: ambiguous' });
  });
});
