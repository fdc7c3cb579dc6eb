/**
 * Reading the retained history for people: blame, per-file diffs, filtered and paged history,
 * files at a retained generation, and a revert that refuses on conflict without writing. Three
 * actors publish across a checkpoint boundary (checkpointPacks 2, one retained checkpoint).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDomainError } from '@slivingdoc/envelope';
import { describe, expect, it } from 'vitest';
import { memoryStore, participant, put, rejection, snapshot } from './helpers';

const CHECKPOINTS = { checkpointPacks: 2, retainedCheckpoints: 1 };

/** Three actors write `notes.md` over six publications; checkpoints compact the early ones. */
async function notebook() {
  const store = memoryStore();
  const alice = await participant(store, CHECKPOINTS);
  const bob = await participant(store, CHECKPOINTS);
  const carol = await participant(store, CHECKPOINTS);
  const publish = async (who: typeof alice, actor: string, path: string, text: string) => {
    await who.service.pull({});
    await put(who.dir, path, text);
    const result = await who.service.commit({ message: `${actor} writes ${path}\n\nbody`, actor });
    // Lets a scheduled checkpoint finish before the next publication.
    await who.service.close();
    return result.generation;
  };
  await publish(alice, 'alice', 'notes.md', 'one\ntwo\nthree\n'); // 1
  await publish(bob, 'bob', 'notes.md', 'one\nTWO\nthree\n'); // 2
  await publish(carol, 'carol', 'todo.md', 'x\n'); // 3
  await publish(alice, 'alice', 'notes.md', 'one\nTWO\nthree\nfour\n'); // 4
  await publish(bob, 'bob', 'dir/deep.md', 'deep\n'); // 5
  await publish(carol, 'carol', 'notes.md', 'zero\none\nTWO\nthree\nfour\nfive\n'); // 6
  return { store, alice, bob, carol };
}

describe('reading the retained history', () => {
  it('blames each line, with lines older than the history marked "before"', async () => {
    const { alice } = await notebook();
    const history = await alice.service.history({ limit: 100 });
    const generations = history.publications.map((p) => p.generation);
    const oldest = generations.at(-1)!;
    expect(oldest).toBeGreaterThan(1); // the checkpoint compacted the early publications
    expect(history.checkpoints.length).toBeGreaterThan(0);
    const boundary = history.publications.at(-1)!;
    expect(boundary.files).toBeUndefined();

    const blame = await alice.service.blame({ file: 'notes.md' });
    expect(blame.generation).toBe(6);
    expect(blame.lines.map((l) => l.text)).toEqual(['zero', 'one', 'TWO', 'three', 'four', 'five']);
    const by = (n: number) => blame.lines[n]!.origin;
    expect(by(0)).toMatchObject({
      generation: 6,
      actor: 'carol',
      message: 'carol writes notes.md\n\nbody',
    });
    expect(by(4)).toMatchObject({ generation: 4, actor: 'alice' });
    expect(by(5)).toMatchObject({ generation: 6, actor: 'carol' });
    // one, TWO, three were written before the retained history's first known change.
    for (const n of [1, 2, 3]) expect(by(n)).toEqual({ before: oldest + 1 });

    // At a retained older generation; the same attribution up to it.
    const at4 = await alice.service.blame({ file: 'notes.md', generation: 4 });
    expect(at4.lines.map((l) => l.text)).toEqual(['one', 'TWO', 'three', 'four']);
    expect(at4.lines[3]!.origin).toMatchObject({ generation: 4, actor: 'alice' });

    expect(await rejection(alice.service.blame({ file: 'none.md' }))).toMatchObject({
      code: 'INVALID_REQUEST',
      reason: 'FILE_NOT_FOUND',
    });
    expect(await rejection(alice.service.blame({ file: 'notes.md', generation: 1 }))).toMatchObject(
      {
        code: 'INVALID_REQUEST',
        reason: 'GENERATION_NOT_RETAINED',
      },
    );
  });

  it('pages and filters the history by actor and path, and reads files at a generation', async () => {
    const { alice } = await notebook();
    const all = await alice.service.history({ limit: 100 });
    const page1 = await alice.service.history({ limit: 2 });
    const page2 = await alice.service.history({ limit: 2, offset: 2 });
    expect(page1.more).toBe(true);
    expect([...page1.publications, ...page2.publications]).toEqual(all.publications.slice(0, 4));
    expect(all.more).toBe(false);

    const bob = await alice.service.history({ limit: 100, actor: 'bob' });
    expect(bob.publications.every((p) => p.actor === 'bob')).toBe(true);
    expect(bob.publications[0]).toMatchObject({
      generation: 5,
      files: [{ path: 'dir/deep.md', insertions: 1, deletions: 0 }],
    });
    const deep = await alice.service.history({ limit: 100, file: 'dir' });
    expect(deep.publications.map((p) => p.generation)).toEqual([5]);
    const notes = await alice.service.history({ limit: 100, file: 'notes.md' });
    expect(notes.publications.map((p) => p.generation).slice(0, 2)).toEqual([6, 4]);

    expect(await alice.service.files({})).toEqual({
      generation: 6,
      files: ['dir/deep.md', 'notes.md', 'todo.md'],
    });
    expect((await alice.service.files({ generation: 4 })).files).toEqual(['notes.md', 'todo.md']);
    const at4 = await alice.service.readFile({ file: 'notes.md', generation: 4 });
    expect(Buffer.from(at4.content).toString()).toBe('one\nTWO\nthree\nfour\n');
    // The manifest's generation also counts checkpoints.
    expect(await alice.service.acceptedGeneration()).toBeGreaterThanOrEqual(6);
  });

  it('gives unified diffs with line numbers per publication', async () => {
    const { alice } = await notebook();
    const detail = await alice.service.publication({ generation: 6 });
    expect(detail.members).toHaveLength(1);
    const [file] = detail.members[0]!.files!;
    expect(file).toMatchObject({ path: 'notes.md', change: 'modified', insertions: 2 });
    expect(file!.hunks).toEqual([
      {
        oldStart: 1,
        oldLines: 4,
        newStart: 1,
        newLines: 6,
        lines: [
          { kind: 'added', text: 'zero', newNumber: 1 },
          { kind: 'context', text: 'one', oldNumber: 1, newNumber: 2 },
          { kind: 'context', text: 'TWO', oldNumber: 2, newNumber: 3 },
          { kind: 'context', text: 'three', oldNumber: 3, newNumber: 4 },
          { kind: 'context', text: 'four', oldNumber: 4, newNumber: 5 },
          { kind: 'added', text: 'five', newNumber: 6 },
        ],
      },
    ]);
    // The boundary publication: its own changes are gone, so it cannot be reverted.
    const oldest = (await alice.service.history({ limit: 100 })).publications.at(-1)!;
    const boundary = await alice.service.publication({ generation: oldest.generation });
    expect(boundary.revertible).toBe(false);
    expect(boundary.members[0]!.files).toBeUndefined();
  });

  it('a revert that conflicts with a later publication, asked to refuse, writes nothing', async () => {
    const { alice } = await notebook();
    await alice.service.pull({});
    const before = await snapshot(alice.dir);
    const accepted = await alice.service.acceptedGeneration();
    const error = await alice.service
      .revert({ generation: 4, onConflict: 'refuse' })
      .catch((e) => e);
    expect(isDomainError(error), String(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CONTENT_CONFLICT', reason: 'MERGE_CONFLICT' });
    expect(error.files).toEqual([
      { path: 'notes.md', reason: 'TEXT_CONFLICT', ranges: [expect.any(Object)] },
    ]);
    expect(await snapshot(alice.dir)).toEqual(before);
    expect(await alice.service.acceptedGeneration()).toBe(accepted);
    // A clean revert still publishes as the CLI's does.
    const reverted = await alice.service.revert({
      generation: 5,
      actor: 'alice',
      onConflict: 'refuse',
    });
    expect(reverted.generation).toBeGreaterThan(accepted);
    await expect(readFile(join(alice.dir, 'dir/deep.md'))).rejects.toThrow();
  });
});
