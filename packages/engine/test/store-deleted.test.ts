import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore } from '@slivingdoc/store';
import { afterEach, describe, expect, it } from 'vitest';
import { get, participant, put, rejection } from './helpers';

// The embedded store's directory deleted while servers run : an absent
// `current` is an empty store (contract §7). A directory with a baseline above 0 answers
// REMOTE_ROLLED_BACK (not a retryable STORE_ERROR forever); a fresh directory works, and the
// store directory is recreated as needed.

let storeDir: string;
afterEach(() => rm(storeDir, { recursive: true, force: true }));

describe('the embedded store directory deleted under running servers', () => {
  it('REMOTE_ROLLED_BACK for a pulled directory; a fresh directory publishes anew', async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'engine-store-deleted-'));
    const store = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
    const alice = await participant(store);
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');
    await alice.service.commit({ message: 'a' });

    await rm(storeDir, { recursive: true, force: true });
    await put(alice.dir, 'a.md', 'edited\n');
    const rolledBack = { code: 'STORAGE_INTEGRITY', reason: 'REMOTE_ROLLED_BACK' };
    expect(await rejection(alice.service.commit({ message: 'b' }))).toMatchObject(rolledBack);
    expect(await rejection(alice.service.pull({}))).toMatchObject(rolledBack);
    expect(await get(alice.dir, 'a.md')).toBe('edited\n');

    const carol = await participant(store);
    expect((await carol.service.pull({})).generation).toBe(0);
    await put(carol.dir, 'c.md', 'c\n');
    expect((await carol.service.commit({ message: 'c' })).generation).toBe(1);
    // The store came back with its temp directory; nothing is left in it.
    expect(await readdir(join(storeDir, 'nb', '.tmp'))).toEqual([]);
    const dave = await participant(store);
    await dave.service.pull({});
    expect(await get(dave.dir, 'c.md')).toBe('c\n');
  });
});
