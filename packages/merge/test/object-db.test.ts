import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  blobOid,
  CommitFormatError,
  type ObjectDb,
  ObjectMissingError,
  openObjectDb,
  TreeError,
} from '../src/index';
import { openMemoryObjectDb } from '../src/testing';
import { bareRepo, gitOk, tempDir, utf8 } from './git-oracle';

const scratch = tempDir('merge-objectdb-');
afterAll(() => scratch.remove());

let counter = 0;
const variants: [string, () => Promise<{ db: ObjectDb; gitdir?: string }>][] = [
  [
    'on disk',
    async () => {
      const gitdir = bareRepo(`${scratch.dir}/repo-${counter++}`);
      return { db: await openObjectDb({ gitdir }), gitdir };
    },
  ],
  ['in memory', async () => ({ db: openMemoryObjectDb() })],
];

describe.each(variants)('ObjectDb %s', (_name, open) => {
  it('stores blobs under git’s own oid and reads them back byte for byte', async () => {
    const { db } = await open();
    const content = utf8('héllo\r\nworld');
    const oid = await db.writeBlob(content);
    expect(oid).toBe(blobOid(content));
    expect(Buffer.from(await db.readBlob(oid)).equals(Buffer.from(content))).toBe(true);
    expect(await db.has(oid)).toBe(true);
    expect(await db.has('0'.repeat(40))).toBe(false);
    expect(await db.has('not an oid')).toBe(false);
  });

  it('round-trips a nested tree as a flat map of files', async () => {
    const { db } = await open();
    const entries = new Map([
      ['a.md', await db.writeBlob(utf8('a'))],
      ['notes/b.md', await db.writeBlob(utf8('b'))],
      ['notes/deep/c.md', await db.writeBlob(utf8('c'))],
      ['notes.md', await db.writeBlob(utf8('n'))],
      ['Ünïcode/é.md', await db.writeBlob(utf8('u'))],
    ]);
    const tree = await db.writeTree(entries);
    expect(await db.readTree(tree)).toEqual(entries);
    expect(await db.readTree(await db.writeTree(new Map()))).toEqual(new Map());
  });

  it('refuses invalid paths and oids with TreeError', async () => {
    const { db } = await open();
    const oid = await db.writeBlob(utf8('x'));
    for (const bad of [
      '',
      '/a',
      'a/',
      'a//b',
      './a',
      'a/../b',
      '.git/x',
      'x/.GIT',
      'nul\0byte',
      'lone\ud800',
    ]) {
      await expect(db.writeTree(new Map([[bad, oid]]))).rejects.toSatisfy(
        (e) => e instanceof TreeError && e.kind === 'INVALID_PATH',
      );
    }
    await expect(db.writeTree(new Map([['a', 'xyz']]))).rejects.toBeInstanceOf(TreeError);
    await expect(
      db.writeTree(
        new Map([
          ['a', oid],
          ['a/b', oid],
        ]),
      ),
    ).rejects.toSatisfy((e) => e instanceof TreeError && e.kind === 'PATH_CONFLICT');
  });

  it('reads a missing or wrongly typed object as ObjectMissingError', async () => {
    const { db } = await open();
    const blob = await db.writeBlob(utf8('x'));
    await expect(db.readBlob('1'.repeat(40))).rejects.toBeInstanceOf(ObjectMissingError);
    await expect(db.readTree(blob)).rejects.toBeInstanceOf(ObjectMissingError);
    await expect(db.readCommit(blob)).rejects.toBeInstanceOf(ObjectMissingError);
  });

  it('round-trips commits with zero and one parent, time in whole UTC seconds', async () => {
    const { db } = await open();
    const tree = await db.writeTree(new Map([['a.md', await db.writeBlob(utf8('a'))]]));
    const root = await db.writeCommit({ tree, message: utf8('first'), time: 1_700_000_000 });
    const child = await db.writeCommit({
      tree,
      parent: root,
      message: utf8('second\n'),
      time: 1_700_000_001,
    });
    expect(await db.readCommit(root)).toEqual({
      tree,
      message: utf8('first'),
      time: 1_700_000_000,
      author: 'slivingdoc',
    });
    expect(await db.readCommit(child)).toEqual({
      tree,
      parent: root,
      message: utf8('second\n'),
      time: 1_700_000_001,
      author: 'slivingdoc',
    });
    await expect(db.writeCommit({ tree, message: utf8('x'), time: 1.5 })).rejects.toBeInstanceOf(
      CommitFormatError,
    );
  });
});

describe('ObjectDb against canonical git', () => {
  it('writes trees in git order that git reads back identically (fsck clean)', async () => {
    const gitdir = bareRepo(`${scratch.dir}/order`);
    const db = await openObjectDb({ gitdir });
    const names = ['a', 'a-b', 'a.b', 'a/b', 'a0', 'b/c/d', 'é', 'z', 'ß/x', '😀', 'ｚ'];
    const entries = new Map<string, string>();
    for (const name of names)
      entries.set(name === 'a' ? 'aa' : name, await db.writeBlob(utf8(name)));
    const tree = await db.writeTree(entries);
    const commit = await db.writeCommit({ tree, message: utf8('m'), time: 1 });
    gitOk(['fsck', '--strict', '--no-dangling', commit], { cwd: gitdir });
    const listed = gitOk(['-c', 'core.quotePath=false', 'ls-tree', '-r', '-z', tree], {
      cwd: gitdir,
    })
      .toString('utf8')
      .split('\0')
      .filter(Boolean)
      .map((line) => {
        const [meta, path] = line.split('\t') as [string, string];
        return [path, meta.split(' ')[2]] as const;
      });
    expect(new Map(listed)).toEqual(entries);
    for (const [, oid] of listed)
      expect(gitOk(['cat-file', '-t', oid as string], { cwd: gitdir }).toString()).toBe('blob\n');
  });

  it('commit messages with CR, CRLF, blank lines and non-ASCII survive byte for byte (git cat-file)', async () => {
    const gitdir = bareRepo(`${scratch.dir}/messages`);
    const db = await openObjectDb({ gitdir });
    const tree = await db.writeTree(new Map([['a', await db.writeBlob(utf8('a'))]]));
    const messages = [
      '\n\nleading blank lines',
      'trailing blank lines\n\n\n',
      'cr\ronly',
      'crlf\r\nbody\r\n',
      'naïve — 日本語 😀',
      'no newline',
      ' \t spaces \n',
    ];
    let parent: string | undefined;
    for (const message of messages) {
      const bytes = utf8(message);
      const oid: string = await db.writeCommit(
        parent
          ? { tree, parent, message: bytes, time: 1_700_000_123 }
          : { tree, message: bytes, time: 1_700_000_123 },
      );
      const raw = gitOk(['cat-file', 'commit', oid], { cwd: gitdir });
      const expectedHeader =
        `tree ${tree}\n${parent ? `parent ${parent}\n` : ''}` +
        'author slivingdoc <slivingdoc@localhost> 1700000123 +0000\ncommitter slivingdoc <slivingdoc@localhost> 1700000123 +0000\n\n';
      expect(raw.equals(Buffer.concat([Buffer.from(expectedHeader), bytes]))).toBe(true);
      expect(Buffer.from((await db.readCommit(oid)).message).equals(Buffer.from(bytes))).toBe(true);
      parent = oid;
    }
  });

  it('records the actor as the author name; the committer stays slivingdoc (git cat-file)', async () => {
    const gitdir = bareRepo(`${scratch.dir}/author`);
    const db = await openObjectDb({ gitdir });
    const tree = await db.writeTree(new Map([['a', await db.writeBlob(utf8('a'))]]));
    const oid = await db.writeCommit({
      tree,
      message: utf8('m'),
      time: 5,
      author: 'claude-code 日本',
    });
    const raw = gitOk(['cat-file', 'commit', oid], { cwd: gitdir }).toString('utf8');
    expect(raw).toContain('\nauthor claude-code 日本 <slivingdoc@localhost> 5 +0000\n');
    expect(raw).toContain('\ncommitter slivingdoc <slivingdoc@localhost> 5 +0000\n');
    gitOk(['fsck', '--strict', '--no-dangling', oid], { cwd: gitdir });
    expect((await db.readCommit(oid)).author).toBe('claude-code 日本');
    for (const author of ['', 'a<b', 'x>', 'tab\there', 'x'.repeat(65)]) {
      await expect(
        db.writeCommit({ tree, message: utf8('m'), time: 5, author }),
      ).rejects.toBeInstanceOf(CommitFormatError);
    }
  });

  it('reads a tree git wrote, and refuses one holding a mode other than 100644/40000', async () => {
    const gitdir = bareRepo(`${scratch.dir}/modes`);
    const db = await openObjectDb({ gitdir });
    const blob = gitOk(['hash-object', '-w', '--stdin'], { cwd: gitdir, input: 'x' })
      .toString()
      .trim();
    const good = gitOk(['mktree'], { cwd: gitdir, input: `100644 blob ${blob}\tf.md\n` })
      .toString()
      .trim();
    expect(await db.readTree(good)).toEqual(new Map([['f.md', blob]]));
    for (const mode of ['100755', '120000']) {
      const bad = gitOk(['mktree'], { cwd: gitdir, input: `${mode} blob ${blob}\tbad\n` })
        .toString()
        .trim();
      await expect(db.readTree(bad)).rejects.toSatisfy(
        (e) => e instanceof TreeError && e.kind === 'INVALID_MODE' && e.path === 'bad',
      );
    }
    // A loose object file is what git wrote: prove we did not just read our own cache.
    expect(
      readFileSync(`${gitdir}/objects/${blob.slice(0, 2)}/${blob.slice(2)}`).length,
    ).toBeGreaterThan(0);
  });
});
