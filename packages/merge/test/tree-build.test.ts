import { seededRandom } from '@slivingdoc/testkit/seeded-random';
import { describe, expect, it } from 'vitest';
import { type ObjectDb, type Oid, TreeError } from '../src/index';
import type { GitObjectDb } from '../src/storage/object-db';
import { rebuildTree, type TreeIo } from '../src/storage/tree-build';
import { openMemoryObjectDb } from '../src/testing';
import { utf8 } from './git-oracle';

const reference = openMemoryObjectDb();

/** The same tree built from scratch (no base) in a database of its own. */
function fullBuild(entries: Map<string, Oid>): Promise<Oid> {
  return reference.writeTree(entries);
}

/** The database's own reads and writes, counting how many tree objects each touched. */
function countingIo(git: GitObjectDb): TreeIo & { reads: number; writes: number } {
  const io = {
    reads: 0,
    writes: 0,
    readTreeObject: (tree: Oid, where: string) => {
      io.reads += 1;
      return git.readTreeObject(tree, where);
    },
    putTree: (content: Uint8Array) => {
      io.writes += 1;
      return git.putObject('tree', content);
    },
  };
  return io;
}

// Names around git's ordering edge: a directory sorts as if its name ended in '/'.
const NAMES = ['a', 'a.md', 'a-b', 'a0', 'b', 'é', 'Z'];

function randomPath(random: () => number): string {
  const depth = 1 + Math.floor(random() * 3);
  return Array.from({ length: depth }, () => NAMES[Math.floor(random() * NAMES.length)]).join('/');
}

/** True when no path of `entries` is also a directory of another. */
function consistent(entries: Map<string, Oid>): boolean {
  for (const path of entries.keys()) {
    for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1))
      if (entries.has(path.slice(0, at))) return false;
  }
  return true;
}

describe('writeTree on top of a base it built', () => {
  it('gives the full build’s oid for random adds, deletes, file↔directory swaps and emptied directories', async () => {
    const random = seededRandom(7);
    const db = openMemoryObjectDb();
    const blobs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => db.writeBlob(utf8(`blob ${i}\n`))),
    );
    let entries = new Map<string, Oid>();
    let tree = await db.writeTree(entries);
    let checked = 0;
    for (let round = 0; round < 300; round += 1) {
      const next = new Map(entries);
      for (let edits = 1 + Math.floor(random() * 4); edits > 0; edits -= 1) {
        const existing = [...next.keys()];
        if (existing.length > 0 && random() < 0.4)
          next.delete(existing[Math.floor(random() * existing.length)] as string);
        else next.set(randomPath(random), blobs[Math.floor(random() * blobs.length)] as Oid);
      }
      if (!consistent(next)) {
        // The full build's refusal, unchanged.
        await expect(db.writeTree(next, { tree, entries })).rejects.toSatisfy(
          (e) => e instanceof TreeError && e.kind === 'PATH_CONFLICT',
        );
        continue;
      }
      const built = await db.writeTree(next, { tree, entries });
      expect(built).toBe(await fullBuild(next));
      expect(await db.readTree(built)).toEqual(next);
      entries = next;
      tree = built;
      checked += 1;
    }
    expect(checked).toBeGreaterThan(150);
  });

  it('re-encodes only the directories on the changed path and reads no other tree', async () => {
    const db = openMemoryObjectDb() as GitObjectDb;
    const blob = await db.writeBlob(utf8('x\n'));
    const other = await db.writeBlob(utf8('y\n'));
    const entries = new Map<string, Oid>();
    for (let d = 0; d < 20; d += 1)
      for (let f = 0; f < 20; f += 1) entries.set(`d${d}/sub/f${f}.md`, blob);
    const tree = await db.writeTree(entries);
    const changed = new Map(entries).set('d3/sub/f7.md', other);
    const io = countingIo(db);
    const built = await rebuildTree(changed, { tree, entries }, io);
    expect(built).toBe(await fullBuild(changed));
    expect({ reads: io.reads, writes: io.writes }).toEqual({ reads: 3, writes: 3 });
    expect(await rebuildTree(new Map(entries), { tree, entries }, io)).toBe(tree);
  });

  it('reports an invalid path or oid exactly as the full build does', async () => {
    const db = openMemoryObjectDb();
    const blob = await db.writeBlob(utf8('x\n'));
    const entries = new Map([['notes/a.md', blob]]);
    const tree = await db.writeTree(entries);
    for (const [path, oid] of [
      ['notes/../b.md', blob],
      ['notes/.git', blob],
      ['notes/c.md', 'not an oid'],
    ]) {
      const bad = new Map(entries).set(path as string, oid as string);
      const full = await fullBuild(bad).catch((e: unknown) => e);
      const incremental = await db.writeTree(bad, { tree, entries }).catch((e: unknown) => e);
      expect(incremental).toBeInstanceOf(TreeError);
      expect(incremental).toEqual(full);
    }
  });

  it('never reuses a subtree of a base it did not build (a foreign tree may not be canonical)', async () => {
    const git = openMemoryObjectDb() as GitObjectDb;
    const db: ObjectDb = git;
    const blob = await db.writeBlob(utf8('x\n'));
    // A foreign subtree with its entries out of git order: readable, but not what we encode.
    const unsorted = Buffer.concat(
      ['b.md', 'a.md'].map((name) =>
        Buffer.concat([Buffer.from(`100644 ${name}\0`), Buffer.from(blob, 'hex')]),
      ),
    );
    const foreign = await git.putObject('tree', unsorted);
    const q = await git.putObject(
      'tree',
      Buffer.concat([Buffer.from('100644 c.md\0'), Buffer.from(blob, 'hex')]),
    );
    const tree = await git.putObject(
      'tree',
      Buffer.concat(
        [
          ['p', foreign],
          ['q', q],
        ].map(([name, oid]) =>
          Buffer.concat([Buffer.from(`40000 ${name}\0`), Buffer.from(oid as string, 'hex')]),
        ),
      ),
    );
    const entries = await db.readTree(tree);
    const changed = new Map(entries).set('q/d.md', blob);
    expect(await db.writeTree(changed, { tree, entries })).toBe(await fullBuild(changed));
  });
});
