import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createFsFromVolume, Volume } from 'memfs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ClosureError,
  createCheckpointPack,
  createIncrementPack,
  importPack,
  type ObjectDb,
  openObjectDb,
  PackError,
  verifyClosure,
} from '../src/index';
import { GitObjectDb } from '../src/storage/object-db';
import { openMemoryObjectDb } from '../src/testing';
import { bareRepo, git, gitOk, tempDir, utf8 } from './git-oracle';

const scratch = tempDir('merge-packs-');
afterAll(() => scratch.remove());
let counter = 0;
const freshDir = (): string => bareRepo(`${scratch.dir}/r${counter++}`);

/** A notebook of `count` files in a few directories, committed. */
async function notebook(
  db: ObjectDb,
  files: Record<string, string>,
  parent?: string,
): Promise<{ head: string; tree: string }> {
  const entries = new Map<string, string>();
  for (const [path, content] of Object.entries(files))
    entries.set(path, await db.writeBlob(utf8(content)));
  const tree = await db.writeTree(entries);
  const head = await db.writeCommit(
    parent ? { tree, parent, message: utf8('m'), time: 1 } : { tree, message: utf8('m'), time: 1 },
  );
  return { head, tree };
}

const FILES: Record<string, string> = {
  'a.md': 'alpha\n',
  'notes/b.md': 'beta\r\n',
  'notes/deep/c.md': 'gamma',
  'other/d.md': '',
};

/** Indexes and verifies `pack` with git; returns the oids git lists in it. */
function gitCheckPack(pack: Uint8Array): { repo: string; oids: Set<string> } {
  const repo = freshDir();
  const file = `${repo}/objects/pack/test.pack`;
  writeFileSync(file, pack);
  gitOk(['index-pack', file], { cwd: repo });
  const verify = gitOk(['verify-pack', '-v', file.replace(/pack$/, 'idx')], {
    cwd: repo,
  }).toString();
  const oids = new Set(
    verify
      .split('\n')
      .filter((line) => /^[0-9a-f]{40} (commit|tree|blob)/.test(line))
      .map((line) => line.slice(0, 40)),
  );
  return { repo, oids };
}

describe('packs against canonical git', () => {
  it('a checkpoint pack is a valid closed pack: git indexes, verifies and reads every object', async () => {
    const db = await openObjectDb({ gitdir: freshDir() });
    const root = await notebook(db, { 'x.md': 'old' });
    const { head, tree } = await notebook(db, FILES, root.head);
    const pack = await createCheckpointPack(db, { head });
    const { repo, oids } = gitCheckPack(pack);
    const expected = new Set([head, ...(await objectsOf(db, tree))]);
    expect(oids).toEqual(expected);
    // The parent is a declared shallow boundary: absent from the pack, the rest is complete.
    expect(oids.has(root.head)).toBe(false);
    // git names the commit whose parents are cut off in `shallow`.
    writeFileSync(`${repo}/shallow`, `${head}\n`);
    const walked = gitOk(['rev-list', '--objects', '--missing=error', head], {
      cwd: repo,
    }).toString();
    expect(
      new Set(
        walked
          .split('\n')
          .filter(Boolean)
          .map((line) => line.slice(0, 40)),
      ),
    ).toEqual(expected);
    for (const [path, content] of Object.entries(FILES)) {
      expect(gitOk(['cat-file', 'blob', `${tree}:${path}`], { cwd: repo }).toString()).toBe(
        content,
      );
    }
    expect(gitOk(['cat-file', 'commit', head], { cwd: repo }).toString()).toContain(
      `parent ${root.head}\n`,
    );
  });

  it('an increment pack holds only the new commit, changed trees and changed blobs', async () => {
    const db = await openObjectDb({ gitdir: freshDir() });
    const parent = await notebook(db, FILES);
    const child = await notebook(
      db,
      { ...FILES, 'notes/deep/c.md': 'gamma changed', 'new.md': 'n' },
      parent.head,
    );
    const pack = await createIncrementPack(db, { head: child.head, parentHead: parent.head });
    const { oids } = gitCheckPack(pack);
    const childTrees = await objectsOf(db, child.tree);
    const parentTrees = await objectsOf(db, parent.tree);
    const fresh = new Set([child.head, ...[...childTrees].filter((oid) => !parentTrees.has(oid))]);
    expect(oids).toEqual(fresh);
    // Root, notes, notes/deep trees + changed blob + new blob + commit.
    expect(oids.size).toBe(6);
  });

  it('imports a pack git wrote with deltas, and the closure of its head verifies', async () => {
    const repo = freshDir();
    const base = 'line\n'.repeat(200);
    const blobs = [base, `${base}extra\n`, `${base}more\n`].map((content) =>
      gitOk(['hash-object', '-w', '--stdin'], { cwd: repo, input: content }).toString().trim(),
    );
    const tree = gitOk(['mktree'], {
      cwd: repo,
      input: blobs.map((oid, i) => `100644 blob ${oid}\tf${i}.md\n`).join(''),
    })
      .toString()
      .trim();
    const commit = gitOk(['commit-tree', tree, '-m', 'git made this'], { cwd: repo })
      .toString()
      .trim();
    const pack = gitOk(['pack-objects', '--stdout', '--window=10', '--depth=5'], {
      cwd: repo,
      input: [commit, tree, ...blobs].join('\n'),
    });
    const verify = gitCheckPack(pack);
    expect(verify.oids.size).toBe(5);
    const db = openMemoryObjectDb();
    await importPack(db, pack);
    await verifyClosure(db, commit);
    expect(Buffer.from(await db.readBlob(blobs[1] as string)).toString()).toBe(`${base}extra\n`);
  });
});

async function objectsOf(db: ObjectDb, tree: string): Promise<Set<string>> {
  const out = new Set<string>([tree]);
  for (const entry of await db.readTreeObject(tree)) {
    if (entry.mode === '40000') for (const oid of await objectsOf(db, entry.oid)) out.add(oid);
    else out.add(entry.oid);
  }
  return out;
}

describe.each([
  ['on disk', async () => openObjectDb({ gitdir: freshDir() })],
  ['in memory', async () => openMemoryObjectDb()],
])('importPack and verifyClosure (%s)', (_name, open) => {
  it('a checkpoint then an increment import into an empty database and verify', async () => {
    const source = openMemoryObjectDb();
    const first = await notebook(source, FILES);
    const second = await notebook(source, { ...FILES, 'a.md': 'alpha 2\n' }, first.head);
    const target = await open();
    await importPack(target, await createCheckpointPack(source, { head: first.head }));
    await verifyClosure(target, first.head);
    await expect(verifyClosure(target, second.head)).rejects.toBeInstanceOf(ClosureError);
    const increment = await createIncrementPack(source, {
      head: second.head,
      parentHead: first.head,
    });
    await importPack(target, increment);
    await importPack(target, increment);
    await verifyClosure(target, second.head);
    expect(await target.readTree(second.tree)).toEqual(await source.readTree(second.tree));
  });

  it('refuses truncated, corrupted and non-pack bytes with PackError and stores nothing', async () => {
    const source = openMemoryObjectDb();
    const { head } = await notebook(source, FILES);
    const pack = await createCheckpointPack(source, { head });
    const target = await open();
    const flipped = Uint8Array.from(pack);
    flipped[40] = (flipped[40] as number) ^ 0xff;
    const badVersion = Uint8Array.from(pack);
    badVersion[7] = 9;
    for (const bad of [
      pack.subarray(0, pack.length - 1),
      pack.subarray(0, 30),
      flipped,
      badVersion,
      utf8('not a pack at all, clearly'),
      new Uint8Array(0),
    ]) {
      await expect(importPack(target, bad)).rejects.toBeInstanceOf(PackError);
      expect(await target.has(head)).toBe(false);
    }
  });

  it('a small object whose stored zlib block fails its Adler-32 is refused although the pack checksum is right', async () => {
    const source = openMemoryObjectDb();
    const { head } = await notebook(source, FILES);
    const pack = Buffer.from(await createCheckpointPack(source, { head }));
    const body = pack.subarray(0, pack.length - 20);
    // The commit is the first object: header byte(s), then the zlib header 78 01, then 01.
    const start = body.indexOf(Buffer.from([0x78, 0x01, 0x01]), 12);
    expect(start).toBeGreaterThan(11);
    body[start + 8] = (body[start + 8] as number) ^ 0x01;
    const resealed = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    const target = await open();
    await expect(importPack(target, resealed)).rejects.toMatchObject({ kind: 'CORRUPT' });
    expect(await target.has(head)).toBe(false);
  });

  it('a pack missing an object fails the closure check naming the missing object', async () => {
    const source = openMemoryObjectDb();
    const parent = await notebook(source, FILES);
    const child = await notebook(source, { ...FILES, 'a.md': 'changed' }, parent.head);
    const target = await open();
    await importPack(
      target,
      await createIncrementPack(source, { head: child.head, parentHead: parent.head }),
    );
    const error = await verifyClosure(target, child.head).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClosureError);
    const closure = error as ClosureError;
    expect(closure.kind).toBe('MISSING_OBJECT');
    // The walk cannot see below a missing tree: it names the two unchanged subtrees themselves.
    const topSubtrees = (await source.readTreeObject(parent.tree))
      .filter((e) => e.mode === '40000')
      .map((e) => e.oid);
    expect(new Set(closure.missing)).toEqual(new Set(topSubtrees));
    expect(topSubtrees).toHaveLength(2);
  });

  it('a blob that is not UTF-8 or holds U+0000 fails the closure check', async () => {
    const db = await open();
    const entries = new Map([
      ['ok.md', await db.writeBlob(utf8('fine'))],
      ['latin1.md', await db.writeBlob(Uint8Array.from([0x63, 0x61, 0x66, 0xe9]))],
      ['nul.md', await db.writeBlob(utf8('a\0b'))],
    ]);
    const head = await db.writeCommit({
      tree: await db.writeTree(entries),
      message: utf8('m'),
      time: 1,
    });
    const error = (await verifyClosure(db, head).catch((e: unknown) => e)) as ClosureError;
    expect(error).toBeInstanceOf(ClosureError);
    expect(error.kind).toBe('INVALID_CONTENT');
    expect(error.invalid.map(({ path, problem }) => [path, problem]).sort()).toEqual([
      ['latin1.md', 'NOT_UTF8'],
      ['nul.md', 'CONTAINS_NUL'],
    ]);
  });
});

describe('bulk blob writes', () => {
  it('writeBlobs stores one pack whose index canonical git reads, and every blob reads back', async () => {
    const gitdir = freshDir();
    const db = await openObjectDb({ gitdir });
    const contents = Array.from({ length: 300 }, (_, i) => utf8(`blob ${i}\n`));
    contents.push(utf8('blob 0\n'));
    const oids = await db.writeBlobs(contents);
    expect(oids[300]).toBe(oids[0]);
    const packs = readdirSync(`${gitdir}/objects/pack`);
    expect(packs.filter((f) => f.endsWith('.idx'))).toHaveLength(1);
    const idx = packs.find((f) => f.endsWith('.idx')) as string;
    const verify = gitOk(['verify-pack', '-v', `${gitdir}/objects/pack/${idx}`], {
      cwd: gitdir,
    }).toString();
    expect(verify.split('\n').filter((l) => / blob /.test(l))).toHaveLength(300);
    expect(gitOk(['cat-file', 'blob', oids[123] as string], { cwd: gitdir }).toString()).toBe(
      'blob 123\n',
    );
    const reopened = await openObjectDb({ gitdir });
    expect(Buffer.from(await reopened.readBlob(oids[299] as string)).toString()).toBe('blob 299\n');
  });

  it('an imported whole-object pack is indexed by our writer in a form git accepts', async () => {
    const source = openMemoryObjectDb();
    const { head, tree } = await notebook(source, FILES);
    const gitdir = freshDir();
    await importPack(await openObjectDb({ gitdir }), await createCheckpointPack(source, { head }));
    const idx = readdirSync(`${gitdir}/objects/pack`).find((f) => f.endsWith('.idx')) as string;
    gitOk(['verify-pack', `${gitdir}/objects/pack/${idx}`], { cwd: gitdir });
    writeFileSync(`${gitdir}/shallow`, `${head}\n`);
    gitOk(['fsck', '--no-dangling', '--strict'], { cwd: gitdir });
    expect(gitOk(['cat-file', 'blob', `${tree}:notes/b.md`], { cwd: gitdir }).toString()).toBe(
      'beta\r\n',
    );
  });
});

describe('staged objects', () => {
  it('staged trees, commit and imported objects read back in memory and reach disk only when persisted', async () => {
    const source = openMemoryObjectDb();
    const first = await notebook(source, FILES);
    const gitdir = freshDir();
    const db = await openObjectDb({ gitdir });
    await importPack(db, await createCheckpointPack(source, { head: first.head }), {
      staged: true,
    });
    await verifyClosure(db, first.head);
    const note = await db.writeBlob(utf8('delta\n'));
    const entries = new Map(await db.readTree(first.tree)).set('notes/e.md', note);
    const tree = await db.writeTree(entries, undefined, { staged: true });
    const head = await db.writeCommit(
      { tree, parent: first.head, message: utf8('staged\r\n'), time: 2 },
      { staged: true },
    );
    expect(await db.has(head)).toBe(true);
    expect(await db.readTree(tree)).toEqual(entries);
    // Nothing but the durable blob is on disk yet: a second database sees no staged object.
    const before = await openObjectDb({ gitdir });
    expect(await before.has(note)).toBe(true);
    for (const oid of [first.head, first.tree, tree, head])
      expect(await before.has(oid)).toBe(false);
    expect(readdirSync(`${gitdir}/objects/pack`)).toEqual([]);

    await db.persistStaged();
    // Every staged object reaches a pack, never a loose file: the imported one as it came, our
    // own commit and trees in one new pack.
    const loose = (oid: string) =>
      existsSync(`${gitdir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
    for (const oid of [head, tree, first.head, first.tree]) expect(loose(oid)).toBe(false);
    const after = await openObjectDb({ gitdir });
    await verifyClosure(after, head);
    expect(await after.readTree(tree)).toEqual(entries);
    writeFileSync(`${gitdir}/shallow`, `${first.head}\n`);
    gitOk(['fsck', '--no-dangling', '--strict'], { cwd: gitdir });
    expect(gitOk(['cat-file', 'commit', head], { cwd: gitdir }).toString()).toMatch(/staged\r\n$/);
    const indexes = () =>
      readdirSync(`${gitdir}/objects/pack`).filter((f) => f.endsWith('.idx')).length;
    expect(indexes()).toBe(2);
    await db.persistStaged();
    expect(indexes()).toBe(2);
  });

  /**
   * A fresh database holding a checkpoint, with `count` increments on top of it (each one new
   * file) imported staged; their packs and the last head.
   */
  async function stagedIncrements(count: number) {
    const source = openMemoryObjectDb();
    const first = await notebook(source, FILES);
    const checkpoint = await createCheckpointPack(source, { head: first.head });
    const packs: Uint8Array[] = [];
    let parent = first;
    for (let i = 0; i < count; i++) {
      const files = { ...FILES, [`new/${i}.md`]: `line ${i}\n` };
      for (let j = 0; j < i; j++) files[`new/${j}.md`] = `line ${j}\n`;
      const next = await notebook(source, files, parent.head);
      packs.push(await createIncrementPack(source, { head: next.head, parentHead: parent.head }));
      parent = next;
    }
    const gitdir = freshDir();
    const db = await openObjectDb({ gitdir });
    await importPack(db, checkpoint);
    for (const pack of packs) await importPack(db, pack, { staged: true });
    return { gitdir, db, packs, head: parent.head };
  }

  const packChecksum = (pack: Uint8Array) =>
    Buffer.from(pack.subarray(pack.byteLength - 20)).toString('hex');

  it('several imported packs are each persisted byte for byte, and only the rest is encoded', async () => {
    const { gitdir, db, packs, head } = await stagedIncrements(3);
    const own = await db.writeCommit(
      { tree: (await db.readCommit(head)).tree, parent: head, message: utf8('own'), time: 3 },
      { staged: true },
    );
    await db.persistStaged();
    const files = new Set(readdirSync(`${gitdir}/objects/pack`));
    for (const pack of packs) {
      const name = `pack-${packChecksum(pack)}.pack`;
      expect(files.has(name)).toBe(true);
      expect(readFileSync(`${gitdir}/objects/pack/${name}`).equals(Buffer.from(pack))).toBe(true);
    }
    // The checkpoint, the three increments as they came, one new pack for the own commit.
    expect([...files].filter((f) => f.endsWith('.idx'))).toHaveLength(5);
    const after = await openObjectDb({ gitdir });
    await verifyClosure(after, own);
    writeFileSync(`${gitdir}/shallow`, '');
    gitOk(['fsck', '--no-dangling', '--strict'], { cwd: gitdir });
  });

  it('more imported packs than one persist keeps are encoded into one new pack', async () => {
    const { gitdir, db, packs, head } = await stagedIncrements(9);
    await db.persistStaged();
    const files = readdirSync(`${gitdir}/objects/pack`);
    for (const pack of packs) expect(files).not.toContain(`pack-${packChecksum(pack)}.pack`);
    expect(files.filter((f) => f.endsWith('.idx'))).toHaveLength(2);
    await verifyClosure(await openObjectDb({ gitdir }), head);
  });

  it('an imported pack that holds everything staged is persisted byte for byte', async () => {
    const source = openMemoryObjectDb();
    const first = await notebook(source, FILES);
    const pack = await createCheckpointPack(source, { head: first.head });
    const gitdir = freshDir();
    const db = await openObjectDb({ gitdir });
    await importPack(db, pack, { staged: true });
    expect(readdirSync(`${gitdir}/objects/pack`)).toEqual([]);
    await db.persistStaged();
    const files = readdirSync(`${gitdir}/objects/pack`).sort();
    const name = `pack-${Buffer.from(pack.subarray(pack.byteLength - 20)).toString('hex')}`;
    expect(files).toEqual([`${name}.idx`, `${name}.pack`]);
    expect(
      Buffer.from(readFileSync(`${gitdir}/objects/pack/${name}.pack`)).equals(Buffer.from(pack)),
    ).toBe(true);
    const after = await openObjectDb({ gitdir });
    await verifyClosure(after, first.head);
    gitOk(['verify-pack', `objects/pack/${name}.idx`], { cwd: gitdir });
  });

  it('a durable write of an object that is only staged puts it on disk', async () => {
    const gitdir = freshDir();
    const db = await openObjectDb({ gitdir });
    const blob = await db.writeBlob(utf8('x\n'));
    const staged = await db.writeTree(new Map([['x.md', blob]]), undefined, { staged: true });
    expect(await (await openObjectDb({ gitdir })).has(staged)).toBe(false);
    expect(await db.writeTree(new Map([['x.md', blob]]))).toBe(staged);
    expect(await (await openObjectDb({ gitdir })).has(staged)).toBe(true);
  });

  it('a staged import of a pack with deltas installs it as usual', async () => {
    const repo = freshDir();
    const big = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    writeFileSync(`${repo}/a`, big);
    writeFileSync(`${repo}/b`, `${big}one more\n`);
    const oids = ['a', 'b'].map((f) =>
      gitOk(['hash-object', '-w', `${repo}/${f}`], { cwd: repo })
        .toString()
        .trim(),
    );
    const pack = gitOk(['pack-objects', '--stdout'], { cwd: repo, input: `${oids.join('\n')}\n` });
    const gitdir = freshDir();
    await importPack(await openObjectDb({ gitdir }), pack, { staged: true });
    const reopened = await openObjectDb({ gitdir });
    expect(Buffer.from(await reopened.readBlob(oids[1] as string)).toString()).toBe(
      `${big}one more\n`,
    );
  });
});

describe('importPack failure leaves nothing readable', () => {
  it('a file-system failure while publishing the index leaves no pack, index or object', async () => {
    const fs = createFsFromVolume(new Volume());
    fs.mkdirSync('/git/objects/pack', { recursive: true });
    const rename = fs.promises.rename.bind(fs.promises);
    fs.promises.rename = (async (from: string, to: string) => {
      if (String(to).endsWith('.idx'))
        throw Object.assign(new Error('injected ENOSPC'), { code: 'ENOSPC' });
      return rename(from, to);
    }) as typeof fs.promises.rename;
    // Small packs are installed with synchronous calls: inject there too.
    const renameSync = fs.renameSync.bind(fs);
    fs.renameSync = ((from: string, to: string) => {
      if (String(to).endsWith('.idx'))
        throw Object.assign(new Error('injected ENOSPC'), { code: 'ENOSPC' });
      return renameSync(from, to);
    }) as typeof fs.renameSync;
    const db = new GitObjectDb(
      fs as unknown as ConstructorParameters<typeof GitObjectDb>[0],
      '/git',
    );
    const source = openMemoryObjectDb();
    const { head } = await notebook(source, FILES);
    await expect(importPack(db, await createCheckpointPack(source, { head }))).rejects.toThrow(
      'injected ENOSPC',
    );
    expect(fs.readdirSync('/git/objects/pack')).toEqual([]);
    expect(fs.existsSync('/git/incoming') ? fs.readdirSync('/git/incoming') : []).toEqual([]);
    expect(
      await new GitObjectDb(
        fs as unknown as ConstructorParameters<typeof GitObjectDb>[0],
        '/git',
      ).has(head),
    ).toBe(false);
  });

  it('a thin pack whose delta base is absent is refused and leaves no pack or index behind', async () => {
    const repo = freshDir();
    const base = 'line\n'.repeat(200);
    const baseOid = gitOk(['hash-object', '-w', '--stdin'], { cwd: repo, input: base })
      .toString()
      .trim();
    const nextOid = gitOk(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${base}x\n` })
      .toString()
      .trim();
    const tree = gitOk(['mktree'], { cwd: repo, input: `100644 blob ${baseOid}\ta\n` })
      .toString()
      .trim();
    const tree2 = gitOk(['mktree'], { cwd: repo, input: `100644 blob ${nextOid}\ta\n` })
      .toString()
      .trim();
    const c1 = gitOk(['commit-tree', tree, '-m', '1'], { cwd: repo }).toString().trim();
    const c2 = gitOk(['commit-tree', tree2, '-p', c1, '-m', '2'], { cwd: repo }).toString().trim();
    const thin = gitOk(['pack-objects', '--stdout', '--thin', '--revs'], {
      cwd: repo,
      input: `${c2}\n^${c1}\n`,
    });
    expect(git(['index-pack', '--stdin'], { cwd: freshDir(), input: thin }).status).not.toBe(0);
    const gitdir = freshDir();
    const db = await openObjectDb({ gitdir });
    await expect(importPack(db, thin)).rejects.toSatisfy(
      (e) => e instanceof PackError && e.kind === 'UNRESOLVED_DELTA',
    );
    expect(readdirSync(`${gitdir}/objects/pack`)).toEqual([]);
    expect(await db.has(c2)).toBe(false);
  });
});
