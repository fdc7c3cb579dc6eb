/**
 * The retained history as `log` and `revert` see it when one increment holds several chained
 * commits (a group commit publishes one increment with one commit per member, contract §9). The
 * increment is built by hand: one pack holding both members' objects.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIncrementPack, importPack, openObjectDb } from '@slivingdoc/merge';
// The pack codec itself: it assembles one pack from two.
import { encodePack, type GitObject as PackObject, scanPack } from '@slivingdoc/merge/testing';
import {
  appendIncrement,
  CURRENT_KEY,
  createMemoryStore,
  decodeManifest,
  encodeManifest,
  newUuidV7,
} from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import { participant } from './helpers';

describe('the retained history of a group increment', () => {
  it('lists every member commit with the increment’s generation; revert undoes the whole increment', async () => {
    const store = createMemoryStore();
    const alice = await participant(store);
    await alice.service.pull({});
    await writeFile(join(alice.dir, 'plan.md'), 'goal\n');
    await alice.service.commit({ message: 'Plan', actor: 'alice' });

    // One increment with two chained commits, as the holder of a group turn publishes it.
    const current = await store.get(CURRENT_KEY);
    const manifest = decodeManifest(current!.body);
    const db = await openObjectDb({ gitdir: await mkdtemp(join(tmpdir(), 'history-db-')) });
    const checkpoint = await store.get(manifest.checkpoint.key);
    await importPack(db, checkpoint!.body);
    const base = await db.readCommit(manifest.head);
    const baseEntries = await db.readTree(base.tree);
    const member = async (parent: string, path: string, text: string, author: string) => {
      const entries = new Map(await db.readTree((await db.readCommit(parent)).tree));
      entries.set(path, await db.writeBlob(Buffer.from(text)));
      const tree = await db.writeTree(entries);
      const message = Buffer.from(`${author} writes ${path}`);
      return db.writeCommit({ tree, parent, message, time: 1_800_000_000, author });
    };
    expect(baseEntries.size).toBe(1);
    const first = await member(manifest.head, 'a.md', 'from a\n', 'agent-a');
    const second = await member(first, 'b.md', 'from b\nsecond\n', 'agent-b');
    const pack = encodePack(
      [
        await createIncrementPack(db, { head: first, parentHead: manifest.head }),
        await createIncrementPack(db, { head: second, parentHead: first }),
      ].flatMap((bytes) => scanPack(bytes).entries.map((entry) => entry.object as PackObject)),
    );
    const publication = newUuidV7();
    const next = appendIncrement(manifest, {
      head: second,
      sha256: createHash('sha256').update(pack).digest('hex'),
      size: BigInt(pack.byteLength),
      publication,
    });
    const key = next.increments.at(-1)!.key;
    await store.putImmutable(key, pack, {});
    await store.replaceIfMatch(CURRENT_KEY, encodeManifest(next), current!.etag);

    const history = await alice.service.log({ limit: 10, stat: true });
    expect(history.generation).toBe(2);
    expect(
      history.publications.map(({ generation, actor, message, files }) => ({
        generation,
        actor,
        message,
        files,
      })),
    ).toEqual([
      {
        generation: 2,
        actor: 'agent-b',
        message: 'agent-b writes b.md',
        files: [{ path: 'b.md', insertions: 2, deletions: 0 }],
      },
      {
        generation: 2,
        actor: 'agent-a',
        message: 'agent-a writes a.md',
        files: [{ path: 'a.md', insertions: 1, deletions: 0 }],
      },
      {
        generation: 1,
        actor: 'alice',
        message: 'Plan',
        files: [{ path: 'plan.md', insertions: 1, deletions: 0 }],
      },
    ]);
    expect((await alice.service.log({ limit: 2 })).publications).toHaveLength(2);

    // The publication page: each member oldest first with its own numbered diff.
    const detail = await alice.service.publication({ generation: 2 });
    expect(detail).toMatchObject({ generation: 2, storeGeneration: 2, revertible: true });
    expect(detail.members.map((m) => [m.actor, m.message])).toEqual([
      ['agent-a', 'agent-a writes a.md'],
      ['agent-b', 'agent-b writes b.md'],
    ]);
    expect(detail.members[1]?.files).toEqual([
      {
        path: 'b.md',
        change: 'added',
        insertions: 2,
        deletions: 0,
        binary: false,
        hunks: [
          {
            oldStart: 0,
            oldLines: 0,
            newStart: 1,
            newLines: 2,
            lines: [
              { kind: 'added', text: 'from b', newNumber: 1 },
              { kind: 'added', text: 'second', newNumber: 2 },
            ],
          },
        ],
      },
    ]);
    const blame = await alice.service.blame({ file: 'b.md' });
    expect(blame.lines.map((line) => [line.text, line.origin])).toEqual([
      [
        'from b',
        { generation: 2, time: 1_800_000_000, actor: 'agent-b', message: 'agent-b writes b.md' },
      ],
      [
        'second',
        { generation: 2, time: 1_800_000_000, actor: 'agent-b', message: 'agent-b writes b.md' },
      ],
    ]);

    // Status before and after: behind by the one increment, nothing written.
    expect(await alice.service.status({})).toMatchObject({ state: 'clean', behind: 1 });
    const reverted = await alice.service.revert({ generation: 2, actor: 'alice' });
    expect(reverted.generation).toBe(3);
    // Both members' files go, measured against R as a commit's diffstat is.
    expect(reverted.files).toEqual([
      { path: 'a.md', insertions: 0, deletions: 1 },
      { path: 'b.md', insertions: 0, deletions: 2 },
    ]);
    await expect(readFile(join(alice.dir, 'a.md'))).rejects.toThrow();
    const [latest] = (await alice.service.log({ limit: 1 })).publications;
    expect(latest).toMatchObject({
      generation: 3,
      actor: 'alice',
      message: 'Revert generation 2: agent-b writes b.md',
    });
  });
});

describe('the retained history seen from a directory that started after a checkpoint', () => {
  it('log --stat, diffs and files at a generation read the older retained states (their packs are fetched)', async () => {
    const store = createMemoryStore();
    const writer = await participant(store, { checkpointPacks: 3 });
    await writer.service.pull({});
    for (let i = 0; i < 6; i += 1) {
      await writeFile(join(writer.dir, `f${i % 2}.md`), `line ${i}\n`.repeat(i + 1));
      await writeFile(join(writer.dir, 'keep.md'), 'unchanged since the start\n');
      await writer.service.commit({ message: `c${i}`, actor: 'writer' });
    }
    // Every background checkpoint is done, so the reader's P starts at the newest one.
    await writer.service.close();
    const reader = await participant(store);
    await reader.service.pull({});
    const log = await reader.service.log({ limit: 100, stat: true });
    const retained = log.publications.filter((p) => p.files !== undefined);
    // Publications older than the newest checkpoint are retained and carry their changes.
    expect(retained.length).toBeGreaterThan(3);
    const oldest = retained.at(-1)!;
    expect(oldest.files!.length).toBeGreaterThan(0);
    const publication = await reader.service.publication({ generation: oldest.generation });
    expect(publication.members.flatMap((m) => m.files).length).toBeGreaterThan(0);
    const file = await reader.service.readFile({ file: 'keep.md', generation: oldest.generation });
    expect(Buffer.from(file.content).toString('utf8')).toBe('unchanged since the start\n');
    const blame = await reader.service.blame({ file: 'keep.md' });
    expect(blame.lines).toHaveLength(1);
    // Undoing the oldest retained publication needs the state before it too: every later
    // commit rewrote its files, so the revert is computed and conflicts (nothing is written).
    await expect(
      reader.service.revert({ generation: oldest.generation, actor: 'r', onConflict: 'refuse' }),
    ).rejects.toMatchObject({ code: 'CONTENT_CONFLICT' });
  });
});
