import { readdirSync, writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openObjectDb } from '../src/index';
import { bareRepo, gitOk, tempDir, utf8 } from './git-oracle';

// Our own reader of loose files and whole-object packs (storage/object-files.ts): a database
// opened afresh over a git directory has nothing cached, so every read below is from disk.
const scratch = tempDir('merge-object-files-');
afterAll(() => scratch.remove());
let counter = 0;
const freshRepo = () => bareRepo(`${scratch.dir}/repo-${counter++}`);
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('reading objects back from disk', () => {
  it('reads what another database wrote: loose commits and trees, blobs in a pack', async () => {
    const gitdir = freshRepo();
    const writer = await openObjectDb({ gitdir });
    const contents = Array.from({ length: 100 }, (_, i) => `note ${i}\n`.repeat(i + 1));
    const blobs = await writer.writeBlobs(contents.map(utf8));
    const tree = await writer.writeTree(new Map(blobs.map((oid, i) => [`n/${i}.md`, oid])));
    const commit = await writer.writeCommit({ tree, message: utf8('m'), time: 1 });
    expect(readdirSync(`${gitdir}/objects/pack`).some((n) => n.endsWith('.idx'))).toBe(true);
    const reader = await openObjectDb({ gitdir });
    expect((await reader.readCommit(commit)).tree).toBe(tree);
    const entries = await reader.readTree(tree);
    expect(entries.size).toBe(100);
    for (const [i, oid] of blobs.entries())
      expect(text(await reader.readBlob(oid))).toBe(contents[i]);
    gitOk(['fsck', '--strict', '--no-dangling', commit], { cwd: gitdir });
  });

  it('reads a whole-object pack git wrote and indexed, and finds a pack added after a miss', async () => {
    const gitdir = freshRepo();
    const reader = await openObjectDb({ gitdir });
    const absent = gitOk(['hash-object', '--stdin'], { cwd: gitdir, input: 'later\n' })
      .toString()
      .trim();
    expect(await reader.has(absent)).toBe(false);
    const oids = ['later\n', 'also later\n'].map((input) =>
      gitOk(['hash-object', '-w', '--stdin'], { cwd: gitdir, input }).toString().trim(),
    );
    packLoose(gitdir, oids, ['--window=0']);
    expect(readdirSync(`${gitdir}/objects`).filter((n) => /^[0-9a-f]{2}$/.test(n))).toEqual([]);
    expect(text(await reader.readBlob(oids[0] as string))).toBe('later\n');
    expect(text(await reader.readBlob(oids[1] as string))).toBe('also later\n');
  });

  it('reads the delta entries of a pack git wrote (through isomorphic-git)', async () => {
    const gitdir = freshRepo();
    const base = 'line\n'.repeat(300);
    const contents = [base, `${base}one\n`, `${base}two\n`];
    const oids = contents.map((input) =>
      gitOk(['hash-object', '-w', '--stdin'], { cwd: gitdir, input }).toString().trim(),
    );
    packLoose(gitdir, oids, ['--window=10', '--depth=5']);
    const verify = gitOk(['verify-pack', '-v', ...packIndexes(gitdir)], { cwd: gitdir }).toString();
    expect(verify).toMatch(/chain length = 1/);
    const reader = await openObjectDb({ gitdir });
    for (const [i, oid] of oids.entries())
      expect(text(await reader.readBlob(oid))).toBe(contents[i]);
  });

  it('refuses a loose object whose bytes do not match its id, naming no id', async () => {
    const gitdir = freshRepo();
    const oid = gitOk(['hash-object', '-w', '--stdin'], { cwd: gitdir, input: 'true\n' })
      .toString()
      .trim();
    writeFileSync(
      `${gitdir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`,
      deflateSync(Buffer.from('blob 6\0false\n')),
    );
    const reader = await openObjectDb({ gitdir });
    const refused = await reader.readBlob(oid).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/corrupt/);
    expect((refused as Error).message).not.toContain(oid);
  });
});

/** Packs `oids` into `objects/pack` with git's own writer and indexer, then drops the loose copies. */
function packLoose(gitdir: string, oids: string[], options: string[]): void {
  gitOk(['pack-objects', ...options, `${gitdir}/objects/pack/pack`], {
    cwd: gitdir,
    input: `${oids.join('\n')}\n`,
  });
  gitOk(['prune-packed'], { cwd: gitdir });
}

function packIndexes(gitdir: string): string[] {
  return readdirSync(`${gitdir}/objects/pack`)
    .filter((name) => name.endsWith('.idx'))
    .map((name) => `${gitdir}/objects/pack/${name}`);
}
