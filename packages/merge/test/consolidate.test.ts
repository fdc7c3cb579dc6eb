import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type ObjectDb, openObjectDb } from '../src/index';
import { geometricSplit, PACK_TRIGGER } from '../src/storage/consolidate';
import { openMemoryObjectDb } from '../src/testing';
import { bareRepo, gitOk, tempDir, utf8 } from './git-oracle';

const scratch = tempDir('merge-consolidate-');
afterAll(() => scratch.remove());

let counter = 0;
async function onDisk(): Promise<{ db: ObjectDb; gitdir: string }> {
  const gitdir = bareRepo(`${scratch.dir}/repo-${counter++}`);
  return { db: await openObjectDb({ gitdir }), gitdir };
}

/** One commit of `files` (path → text) on top of `parent`, written the way the engine does. */
async function commitFiles(
  db: ObjectDb,
  files: Map<string, string>,
  parent: string | undefined,
  staged: boolean,
): Promise<string> {
  const entries = new Map<string, string>();
  for (const [path, text] of files) entries.set(path, await db.writeBlob(utf8(text)));
  const tree = await db.writeTree(entries, undefined, { staged });
  const commit = await db.writeCommit(
    { tree, ...(parent === undefined ? {} : { parent }), message: utf8('m\n'), time: 1 },
    { staged },
  );
  if (staged) await db.persistStaged();
  return commit;
}

async function expectClosureReadable(db: ObjectDb, head: string, files: Map<string, string>) {
  const commit = await db.readCommit(head);
  const entries = await db.readTree(commit.tree);
  expect([...entries.keys()].sort()).toEqual([...files.keys()].sort());
  for (const [path, oid] of entries)
    expect(Buffer.from(await db.readBlob(oid)).toString()).toBe(files.get(path));
}

/** git reads every pack as valid and the head's whole tree (history was pruned on purpose). */
function gitAgrees(gitdir: string, head: string): void {
  const packDir = `${gitdir}/objects/pack`;
  for (const name of readdirSync(packDir).filter((n) => n.endsWith('.idx')))
    gitOk(['verify-pack', `${packDir}/${name}`], { cwd: gitdir });
  const listing = gitOk(['ls-tree', '-r', head], { cwd: gitdir }).toString().trim().split('\n');
  for (const line of listing)
    gitOk(['cat-file', '-e', line.split(/\s+/)[2] as string], { cwd: gitdir });
}

describe('geometricSplit', () => {
  it('rolls up the smallest packs until the rest is a doubling progression', () => {
    expect(geometricSplit([1000, 400, 100], 0)).toBe(0);
    expect(geometricSplit([1000, 400, 100], 60)).toBe(1);
    expect(geometricSplit([10, 10, 10, 10], 0)).toBe(4);
    expect(geometricSplit([100, 10, 10], 0)).toBe(2);
    expect(geometricSplit([], 5)).toBe(0);
  });

  it('always leaves a progression whose length is within log2 of the objects', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5000 }), { maxLength: 40 }),
        fc.nat(200),
        (counts, loose) => {
          const split = geometricSplit(counts, loose);
          const ascending = [...counts].sort((a, b) => a - b);
          const rolled = loose + ascending.slice(0, split).reduce((a, b) => a + b, 0);
          const kept = ascending.slice(split);
          const total = rolled + kept.reduce((a, b) => a + b, 0);
          expect(kept.length + 1).toBeLessThanOrEqual(Math.floor(Math.log2(total + 1)) + 2);
        },
      ),
    );
  });
});

describe.each([
  ['on disk', onDisk],
  ['in memory', async () => ({ db: openMemoryObjectDb(), gitdir: undefined })],
])('consolidation %s', (_name, open) => {
  it('keeps every object the roots reach, drops the rest, and bounds the packs', async () => {
    const { db, gitdir } = await open();
    const files = new Map<string, string>();
    let head: string | undefined;
    const heads: string[] = [];
    let maxPacks = 0;
    for (let i = 0; i < 300; i += 1) {
      files.set(`f${i % 7}.md`, `line ${i}\n`);
      head = await commitFiles(db, files, head, i % 3 !== 0);
      heads.push(head);
      const recent = heads.slice(-3);
      await db.consolidate({ roots: async () => ({ closures: recent }) });
      maxPacks = Math.max(maxPacks, (await db.size()).packs);
    }
    expect(maxPacks).toBeLessThan(PACK_TRIGGER);
    await expectClosureReadable(db, head as string, files);
    const full = await db.consolidate({
      roots: async () => ({ closures: [head as string] }),
      full: true,
    });
    expect(full?.dropped).toBeGreaterThan(0);
    const size = await db.size();
    // One commit, its tree, seven blobs.
    expect(size).toMatchObject({ objects: 9, packs: 1, looseObjects: 0 });
    expect(await db.has(heads[0] as string)).toBe(false);
    await expectClosureReadable(db, head as string, files);
    if (gitdir !== undefined) {
      gitAgrees(gitdir, head as string);
      expect(readdirSync(`${gitdir}/objects`).filter((n) => /^[0-9a-f]{2}$/.test(n))).toEqual([]);
    }
  });

  it("keeps objects named as they are (a stat cache's blobs) and drops an unnamed one", async () => {
    const { db } = await open();
    const head = await commitFiles(db, new Map([['a.md', 'a\n']]), undefined, true);
    const named = await db.writeBlob(utf8('a local edit\n'));
    const unnamed = await db.writeBlob(utf8('an edit since overwritten\n'));
    await db.consolidate({
      roots: async () => ({ closures: [head], objects: [named] }),
      full: true,
    });
    expect(await db.has(named)).toBe(true);
    expect(await db.has(unnamed)).toBe(false);
    expect(Buffer.from(await db.readBlob(named)).toString()).toBe('a local edit\n');
  });

  it('with nothing past the thresholds, does nothing', async () => {
    const { db } = await open();
    await commitFiles(db, new Map([['a.md', 'x\n']]), undefined, true);
    expect(await db.consolidate({ roots: async () => ({ closures: [] }) })).toBeUndefined();
  });
});

describe('consolidation on disk after a kill', () => {
  it('removes what an interrupted install or consolidation left, and reads on', async () => {
    const { db, gitdir } = await onDisk();
    const files = new Map([['a.md', 'one\n']]);
    const head = await commitFiles(db, files, undefined, true);
    const packDir = `${gitdir}/objects/pack`;
    writeFileSync(`${packDir}/consolidate-x.pack.tmp`, 'torn');
    writeFileSync(`${packDir}/pack-${'a'.repeat(40)}.pack`, 'no index');
    writeFileSync(`${gitdir}/consolidated-y.tmp`, 'torn');
    expect(await db.removeLeftovers()).toBe(3);
    expect(existsSync(`${packDir}/consolidate-x.pack.tmp`)).toBe(false);
    await expectClosureReadable(db, head, files);
  });

  it('drops a corrupt object instead of failing every later consolidation', async () => {
    const { db, gitdir } = await onDisk();
    const files = new Map([['a.md', 'kept\n']]);
    const head = await commitFiles(db, files, undefined, true);
    const local = await db.writeBlob(utf8('a local edit\n'));
    writeFileSync(`${gitdir}/objects/${local.slice(0, 2)}/${local.slice(2)}`, 'not zlib');
    const fresh = await openObjectDb({ gitdir });
    await fresh.consolidate({
      roots: async () => ({ closures: [head], objects: [local] }),
      full: true,
    });
    expect(await fresh.has(local)).toBe(false);
    await expectClosureReadable(fresh, head, files);
  });

  it('a kill at each step leaves a database the next run repairs, the closure readable', async () => {
    for (const step of ['after-pack-written', 'after-indexes-removed', 'after-files-removed']) {
      const { gitdir, db } = await onDisk();
      const files = new Map<string, string>();
      let head: string | undefined;
      for (let i = 0; i < 40; i += 1) {
        files.set(`f${i % 5}.md`, `v${i}\n`);
        head = await commitFiles(db, files, head, true);
      }
      const killed = new Error('killed');
      await expect(
        db.consolidate({
          roots: async () => ({ closures: [head as string] }),
          full: true,
          step: (name) => (name === step ? Promise.reject(killed) : undefined),
        }),
      ).rejects.toBe(killed);
      // A fresh process over the same P.
      const fresh = await openObjectDb({ gitdir });
      await expectClosureReadable(fresh, head as string, files);
      await fresh.removeLeftovers();
      await fresh.consolidate({ roots: async () => ({ closures: [head as string] }), full: true });
      await expectClosureReadable(fresh, head as string, files);
      expect(await fresh.size()).toMatchObject({ packs: 1, looseObjects: 0 });
      gitAgrees(gitdir, head as string);
      // The process that stopped mid-way is told, and reads on too.
      expect(db.consolidatedElsewhere()).toBe(true);
      await expectClosureReadable(db, head as string, files);
    }
  });
});
