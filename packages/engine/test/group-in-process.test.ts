/**
 * The in-process queue of group commit (docs/engine.md, "Group commit"): while a session of a
 * service holds the gate, the commits of the service's other directories join the holder's
 * round in memory, with no connection to the group endpoint; writers in other processes still
 * join the same round over the socket. (`group-commit.test.ts` runs every group case over both
 * transports.) The holder's CAS is held back so the others queue deterministically.
 */

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SuccessResult } from '@slivingdoc/envelope';
import { importPack } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import {
  createEmbeddedStore,
  createMemoryStore,
  decodeManifest,
  type ObjectStore,
} from '@slivingdoc/store';
import { bundleFixture } from '@slivingdoc/testkit/bundle-fixture';
import { until } from '@slivingdoc/testkit/until';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotebookService, type NotebookService } from '../src/index';
import { joinCounts, queuedAt } from '../src/notebook/publication/endpoint';
import { groupEndpoint } from '../src/notebook/publication/queue';
import { INSTANT_CLOCK, put, tempRoots } from './helpers';

const GROUPED = {
  publicationGateMs: 60_000,
  groupCommit: true,
  groupRecordWait: { idleMs: 120_000, totalMs: 120_000 },
} as const;

let child: string;
const bases: string[] = [];
beforeAll(async () => {
  child = await bundleFixture(join(import.meta.dirname, 'fixtures', 'engine-child.ts'));
}, 120_000);
afterAll(async () => {
  await Promise.all(bases.map((base) => rm(base, { recursive: true, force: true })));
});

/** `store` with every CAS (`replaceIfMatch`) held while `hold()` is in force. */
function holdable(store: ObjectStore) {
  let held: Promise<void> | undefined;
  let release = () => {};
  let casSeen = 0;
  const wrapped: ObjectStore = {
    identity: store.identity,
    get: (key) => store.get(key),
    createIfAbsent: (key, body) => store.createIfAbsent(key, body),
    replaceIfMatch: async (key, body, etag) => {
      casSeen += 1;
      await held;
      return store.replaceIfMatch(key, body, etag);
    },
    putImmutable: (key, body, metadata) => store.putImmutable(key, body, metadata),
    getStream: (key) => store.getStream(key),
    list: (namespace) => store.list(namespace),
    deleteMany: (keys) => store.deleteMany(keys),
    ...(store.conditionForms === undefined ? {} : { conditionForms: store.conditionForms }),
  };
  return {
    store: wrapped,
    casCount: () => casSeen,
    hold() {
      held = new Promise((resolve) => {
        release = () => {
          held = undefined;
          resolve();
        };
      });
    },
    release: () => release(),
  };
}

/** A service with `count` session directories, all pulled after a seed commit. */
async function sessionsOn(store: ObjectStore, count: number) {
  const roots = await tempRoots();
  const service = await createNotebookService({
    store,
    privateRoot: roots.privateRoot,
    workspaceRoot: roots.workspaceRoot,
    notebookDir: join(roots.workspaceRoot, 's0'),
    clock: INSTANT_CLOCK,
    lockTimeoutMs: 30_000,
    ...GROUPED,
  });
  const sessions: NotebookService[] = [];
  for (let i = 0; i < count; i++)
    sessions.push(await service.session({ notebookDir: join(roots.workspaceRoot, `s${i}`) }));
  const first = sessions[0] as NotebookService;
  await first.pull({});
  await put(first.notebookDir, 'seed.md', 'seed\n');
  await first.commit({ message: 'seed' });
  for (const session of sessions) await session.pull({});
  return { service, sessions };
}

/** The messages of the last increment's commits, newest first. */
async function lastIncrementMessages(store: ObjectStore): Promise<string[]> {
  const current = await store.get('current');
  if (current === undefined) throw new Error('no current');
  const increment = decodeManifest(current.body).increments.at(-1);
  if (increment === undefined) throw new Error('no increment');
  const chunks: Uint8Array[] = [];
  for await (const chunk of (await store.getStream(increment.key)) ?? []) chunks.push(chunk);
  const db = openMemoryObjectDb();
  await importPack(db, Buffer.concat(chunks));
  const messages: string[] = [];
  let oid: string | undefined = increment.head;
  while (oid !== undefined && oid !== increment.parent) {
    const commit = await db.readCommit(oid);
    messages.push(Buffer.from(commit.message).toString('utf8'));
    oid = commit.parent;
  }
  return messages;
}

/**
 * The holder commits with its CAS held back, so the members that commit next queue behind its
 * turn; resolves once that CAS was sent.
 */
async function holderInTurn(hold: ReturnType<typeof holdable>, holder: NotebookService) {
  hold.hold();
  await put(holder.notebookDir, 'holder.md', 'holder\n');
  const casBefore = hold.casCount();
  const holderResult = holder.commit({ message: 'holder' });
  await until(() => hold.casCount() > casBefore, 'the holder sent its CAS');
  return { casBefore, holderResult };
}

function ok(result: SuccessResult): SuccessResult {
  expect(result.code).toBe('OK');
  return result;
}

/** Runs one engine call in a real process of its own (`fixtures/engine-child.ts`). */
function runChild(args: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [child, JSON.stringify(args)],
      { cwd: import.meta.dirname },
      (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))),
    );
  });
}

describe('group commit: the in-process queue', () => {
  it('publishes the commits of ten sessions of one service in one group, with no socket', async () => {
    const hold = holdable(createMemoryStore({ prefix: `inproc-${Date.now()}` }));
    const { sessions, service } = await sessionsOn(hold.store, 11);
    const [holder, ...members] = sessions as [NotebookService, ...NotebookService[]];
    const endpoint = groupEndpoint({ store: hold.store, gateScope: '' });
    const before = joinCounts();
    const { casBefore, holderResult } = await holderInTurn(hold, holder);
    const results = members.map(async (member, i) => {
      await put(member.notebookDir, `notes/m${i}.md`, `member ${i}\n`);
      return member.commit({ message: `member ${i}` });
    });
    await until(() => queuedAt(endpoint) === members.length, 'every member queued');
    hold.release();

    const holderGeneration = Number(ok(await holderResult).generation);
    const settled = (await Promise.all(results)).map(ok);
    // The holder's own round, then one CAS for the whole group.
    expect(hold.casCount() - casBefore).toBe(2);
    for (const [i, result] of settled.entries()) {
      expect(result.generation).toBe(holderGeneration + 1);
      expect(result.files).toEqual([{ path: `notes/m${i}.md`, insertions: 1, deletions: 0 }]);
    }
    expect((await lastIncrementMessages(hold.store)).sort()).toEqual(
      members.map((_, i) => `member ${i}`).sort(),
    );
    const after = joinCounts();
    expect(after.socket - before.socket).toBe(0);
    expect(after.inProcess - before.inProcess).toBe(members.length);
    await service.close();
  });

  it('takes members of this process and of another process into one round', async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), 'engine-inproc-')));
    bases.push(base);
    const storeDir = join(base, 'store');
    await mkdir(storeDir);
    const embedded = await createEmbeddedStore({ dir: storeDir, prefix: 'nb' });
    const hold = holdable(embedded);
    const { sessions, service } = await sessionsOn(hold.store, 3);
    const [holder, one, two] = sessions as [NotebookService, NotebookService, NotebookService];
    // The other process: its own private root and workspace, the same store.
    const other = {
      storeDir,
      privateRoot: join(base, 'other-priv'),
      workspaceRoot: join(base, 'other-ws'),
      notebookDir: join(base, 'other-ws', 'nb'),
      group: true,
    };
    await mkdir(other.notebookDir, { recursive: true });
    expect(await runChild({ ...other, op: 'pull' })).toMatchObject({ code: 'OK' });
    await put(other.notebookDir, 'other.md', 'from another process\n');

    const endpoint = groupEndpoint({ store: hold.store, gateScope: '' });
    const before = joinCounts();
    const { casBefore, holderResult } = await holderInTurn(hold, holder);
    await put(one.notebookDir, 'one.md', 'one\n');
    await put(two.notebookDir, 'two.md', 'two\n');
    const local = [one.commit({ message: 'one' }), two.commit({ message: 'two' })];
    const remote = runChild({ ...other, op: 'commit', message: 'other process' });
    await until(() => queuedAt(endpoint) === 3, 'both sessions and the other process queued');
    hold.release();

    const holderGeneration = Number(ok(await holderResult).generation);
    for (const result of await Promise.all(local))
      expect(ok(result).generation).toBe(holderGeneration + 1);
    expect(await remote).toMatchObject({
      code: 'OK',
      generation: holderGeneration + 1,
      files: [{ path: 'other.md', insertions: 1, deletions: 0 }],
    });
    expect(hold.casCount() - casBefore).toBe(2);
    expect((await lastIncrementMessages(hold.store)).sort()).toEqual(
      ['one', 'other process', 'two'].sort(),
    );
    const after = joinCounts();
    expect(after.socket - before.socket).toBe(1);
    expect(after.inProcess - before.inProcess).toBe(2);
    await service.close();
    await embedded.close?.();
  });
});
