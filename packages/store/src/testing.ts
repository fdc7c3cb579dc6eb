/**
 * `@slivingdoc/store/testing`: the object-store contract as a vitest suite, for every driver,
 * ours and a third party's alike. A subpath of its own because it needs vitest, which is a
 * development dependency only (an optional peer for anyone importing this subpath), so
 * installing the library or the app never installs it.
 *
 * ```ts
 * import { describeObjectStore } from '@slivingdoc/store/testing';
 * describeObjectStore('my store', async (prefix) => createMyStore({ prefix }));
 * ```
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isStoreError, StoreError } from './errors';
import { checkpointKey, incrementKey, probeKey } from './keys';
import type { ObjectStore } from './object-store';
import { newUuidV7 } from './uuid';

/**
 * Makes a fresh, empty store under `prefix` on the backend under test; an invalid prefix
 * (`/a`, `a//b`, …) must be refused with a `TypeError`, thrown or rejected.
 */
export type MakeStore = (prefix: string) => Promise<ObjectStore>;

/** Options that size the suite to the backend (a real server is slower than memory). */
export interface ContractOptions {
  /** Concurrent writers per race (default 8). */
  contenders?: number;
  /** Rounds of the replace-if-match race (default 20). */
  rounds?: number;
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const decode = (b: Uint8Array | undefined): string | undefined =>
  b === undefined ? undefined : new TextDecoder().decode(b);
const uniquePrefix = (): string => `t/${newUuidV7()}`;
const packKey = (): string => incrementKey(7n, newUuidV7());

async function collect(stream: AsyncIterable<Uint8Array> | undefined): Promise<Buffer | undefined> {
  if (!stream) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A programming error (key outside the grammar) is a TypeError, thrown or rejected. */
async function expectTypeError(call: () => Promise<unknown>): Promise<void> {
  await expect(Promise.resolve().then(call)).rejects.toThrow(TypeError);
}

async function failureOf(promise: Promise<unknown>): Promise<StoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

/**
 * The object-store contract (contract §7) as one vitest `describe` block, run against every
 * implementation: the memory fake, the embedded store, a real S3 server, and any third-party
 * driver. Each test makes its own store under a unique prefix; stores are not closed here
 * (the caller's `afterAll` does, when its store holds sockets).
 */
export function describeObjectStore(name: string, make: MakeStore, opts: ContractOptions = {}) {
  const contenders = opts.contenders ?? 8;
  const rounds = opts.rounds ?? 20;
  const fresh = (): Promise<ObjectStore> => make(uniquePrefix());

  describe(`ObjectStore contract: ${name}`, () => {
    it('reads an absent key as undefined', async () => {
      const store = await fresh();
      expect(await store.get('current')).toBeUndefined();
      expect(await store.get(packKey())).toBeUndefined();
      expect(await store.getStream(packKey())).toBeUndefined();
    });

    it('creates an absent key and reads the same bytes and ETag back immediately', async () => {
      const store = await fresh();
      const { etag } = await store.createIfAbsent('current', text('v1'));
      const read = await store.get('current');
      expect(decode(read?.body)).toBe('v1');
      expect(read?.etag).toBe(etag);
    });

    it('refuses a second create-if-absent and keeps the first bytes', async () => {
      const store = await fresh();
      const { etag } = await store.createIfAbsent('current', text('first'));
      const err = await failureOf(store.createIfAbsent('current', text('second')));
      expect(err.kind).toBe('precondition-failed');
      const read = await store.get('current');
      expect(decode(read?.body)).toBe('first');
      expect(read?.etag).toBe(etag);
    });

    it('replaces with the current ETag and reads the new bytes immediately', async () => {
      const store = await fresh();
      const created = await store.createIfAbsent('current', text('v1'));
      const replaced = await store.replaceIfMatch('current', text('v2'), created.etag);
      expect(replaced.etag).not.toBe(created.etag);
      const read = await store.get('current');
      expect(decode(read?.body)).toBe('v2');
      expect(read?.etag).toBe(replaced.etag);
    });

    it('never changes anything when replacing with a stale ETag', async () => {
      const store = await fresh();
      const v1 = await store.createIfAbsent('current', text('v1'));
      const v2 = await store.replaceIfMatch('current', text('v2'), v1.etag);
      const err = await failureOf(store.replaceIfMatch('current', text('stale'), v1.etag));
      expect(err.kind).toBe('precondition-failed');
      const read = await store.get('current');
      expect(decode(read?.body)).toBe('v2');
      expect(read?.etag).toBe(v2.etag);
    });

    it('answers precondition-failed to replace-if-match on an absent key, creating nothing', async () => {
      const store = await fresh();
      const other = await (await fresh()).createIfAbsent('current', text('elsewhere'));
      const err = await failureOf(store.replaceIfMatch('current', text('x'), other.etag));
      expect(err.kind).toBe('precondition-failed');
      expect(await store.get('current')).toBeUndefined();
    });

    it(`lets exactly one of ${contenders} concurrent create-if-absent calls win`, async () => {
      const store = await fresh();
      const key = probeKey(newUuidV7());
      const bodies = Array.from({ length: contenders }, (_, i) => `writer-${i}`);
      const results = await Promise.allSettled(
        bodies.map((b) => store.createIfAbsent(key, text(b))),
      );
      const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected')
          expect(isStoreError(r.reason, 'precondition-failed')).toBe(true);
      }
      expect(decode((await store.get(key))?.body)).toBe(bodies[winners[0]!]);
    });

    it(`lets exactly one of ${contenders} replace-if-match calls win each of ${rounds} rounds`, async () => {
      const store = await fresh();
      let etag = (await store.createIfAbsent('current', text('init'))).etag;
      for (let round = 0; round < rounds; round++) {
        const bodies = Array.from({ length: contenders }, (_, i) => `r${round}-w${i}`);
        const results = await Promise.allSettled(
          bodies.map((b) => store.replaceIfMatch('current', text(b), etag)),
        );
        const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        expect(winners, `round ${round}`).toHaveLength(1);
        for (const r of results) {
          // A real server may answer a loser with 500: ambiguous, never success.
          if (r.status === 'rejected') {
            expect(isStoreError(r.reason, 'precondition-failed', 'ambiguous')).toBe(true);
          }
        }
        const read = await store.get('current');
        const winner = results[winners[0]!] as PromiseFulfilledResult<{ etag: string }>;
        expect(decode(read?.body)).toBe(bodies[winners[0]!]);
        expect(read?.etag).toBe(winner.value.etag);
        etag = winner.value.etag;
      }
    });

    it('stores an immutable pack with metadata and streams the exact bytes back', async () => {
      const store = await fresh();
      const key = checkpointKey(1n, newUuidV7());
      const body = Buffer.alloc(300_000, 7);
      body.write('pack header');
      const sha256 = createHash('sha256').update(body).digest('hex');
      await store.putImmutable(key, body, {
        'slivingdoc-sha256': sha256,
        'slivingdoc-size': String(body.length),
        'slivingdoc-kind': 'checkpoint',
        'slivingdoc-generation': '1',
      });
      const streamed = await collect(await store.getStream(key));
      expect(streamed?.equals(body)).toBe(true);
      expect(Buffer.from((await store.get(key))!.body).equals(body)).toBe(true);
    });

    it('lists every pack of both pack namespaces with sizes, and nothing else', async () => {
      const store = await fresh();
      const keys = [
        checkpointKey(1n, newUuidV7()),
        ...Array.from({ length: 5 }, (_, i) => incrementKey(BigInt(i + 2), newUuidV7())),
      ];
      await Promise.all(keys.map((k, i) => store.putImmutable(k, text('x'.repeat(i + 1)), {})));
      await store.createIfAbsent('current', text('manifest'));
      await store.createIfAbsent(probeKey(newUuidV7()), text('probe'));
      const listed = await store.list('packs/');
      expect([...listed].sort((a, b) => a.key.localeCompare(b.key))).toEqual(
        keys.map((key, i) => ({ key, size: i + 1 })).sort((a, b) => a.key.localeCompare(b.key)),
      );
    });

    it('deletes packs and probe keys, ignores absent ones, and refuses current', async () => {
      const store = await fresh();
      const keep = incrementKey(2n, newUuidV7());
      const drop = incrementKey(3n, newUuidV7());
      const probe = probeKey(newUuidV7());
      await store.putImmutable(keep, text('keep'), {});
      await store.putImmutable(drop, text('drop'), {});
      await store.createIfAbsent(probe, text('p'));
      await store.deleteMany([drop, probe, incrementKey(9n, newUuidV7())]);
      expect((await store.list('packs/')).map((o) => o.key)).toEqual([keep]);
      expect(await store.get(probe)).toBeUndefined();
      await store.createIfAbsent(probe, text('again'));
      expect(decode((await store.get(probe))?.body)).toBe('again');
      await expectTypeError(() => store.deleteMany(['current']));
    });

    it('keeps prefixes apart on one backend, the empty prefix included', async () => {
      const a = await make(uniquePrefix());
      const b = await make(uniquePrefix());
      await a.createIfAbsent('current', text('a'));
      expect(await b.get('current')).toBeUndefined();
      await b.createIfAbsent('current', text('b'));
      expect(decode((await a.get('current'))?.body)).toBe('a');
      const root = await make('');
      expect(root.identity).not.toBe(a.identity);
    });

    it('refuses keys outside the grammar and invalid prefixes', async () => {
      const store = await fresh();
      await expectTypeError(() => store.get('packs/x.pack'));
      await expectTypeError(() => store.createIfAbsent(packKey(), text('x')));
      await expectTypeError(() => store.replaceIfMatch('packs/', text('x'), 'e'));
      await expectTypeError(() => store.putImmutable('current', text('x'), {}));
      await expectTypeError(() => store.getStream('current'));
      await expectTypeError(() => store.list('probe/' as 'packs/'));
      for (const bad of ['/a', 'a/', 'a//b', 'a/./b', 'a/../b', 'a\\b']) {
        await expect(make(bad)).rejects.toThrow(TypeError);
      }
    });
  });
}
