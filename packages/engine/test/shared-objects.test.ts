/**
 * One object database per store shared by every directory of a service (docs/engine.md, "One
 * object database per store"): one fetch and one import per increment, consolidation over the
 * union of every directory's roots, the claim and its fallback, and a directory moving between
 * the shared database and its own.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openObjectDb, verifyClosure } from '@slivingdoc/merge';
import { createMemoryStore, decodeManifest, type MemoryStore } from '@slivingdoc/store';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineLogger, NotebookService } from '../src/index';
import { sharedObjectsDir } from '../src/notebook/objects';
import {
  get,
  openOnRoots,
  type Participant,
  participant,
  put,
  stateFile,
  tempRoots,
} from './helpers';

const SHARED = { sharedObjects: true } as const;

/** A store of its own: the publication gate and group are machine-wide per store. */
function privateStore(): MemoryStore {
  return createMemoryStore({ prefix: `shared-${randomUUID()}` });
}

/** Pack downloads (every read but `current`) logged since the last `clearCalls`, by key. */
function packReads(store: MemoryStore): Map<string, number> {
  const reads = new Map<string, number>();
  for (const call of store.calls) {
    if (call.op !== 'get' && call.op !== 'getStream') continue;
    for (const key of call.keys) if (key !== 'current') reads.set(key, (reads.get(key) ?? 0) + 1);
  }
  return reads;
}

/** The increments' keys of `current`. */
async function incrementKeys(store: MemoryStore): Promise<string[]> {
  const current = await store.get('current');
  if (current === undefined) return [];
  return decodeManifest(current.body).increments.map((increment) => increment.key);
}

async function sessions(p: Participant, count: number): Promise<NotebookService[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      p.service.session({ notebookDir: join(p.workspaceRoot, `s${i}`) }),
    ),
  );
}

/** The shared database's git directory for `store` under `privateRoot`. */
function sharedGitdir(privateRoot: string, store: MemoryStore): string {
  return join(sharedObjectsDir(privateRoot, store.identity), 'git');
}

/** Every P's recorded baseline head below `privateRoot` (none before a first publication). */
async function recordedHeads(privateRoot: string): Promise<string[]> {
  const heads: string[] = [];
  for (const key of await readdir(join(privateRoot, 'notebooks'))) {
    const text = await readFile(join(privateRoot, 'notebooks', key, 'state.json'), 'utf8').catch(
      () => undefined,
    );
    const head = text === undefined ? '' : (JSON.parse(text).baselineHead as string);
    if (head !== '') heads.push(head);
  }
  return heads;
}

function recordingLogger(): { logger: EngineLogger; infos: string[] } {
  const infos: string[] = [];
  const logger: EngineLogger = {
    debug() {},
    info(_obj, msg) {
      infos.push(msg);
    },
    warn() {},
    error() {},
  };
  return { logger, infos };
}

describe('one object database per store, shared by the directories of a service', () => {
  it("ten directories: a new directory's first pull fetches no pack, and each increment is fetched once", async () => {
    const store = privateStore();
    const p = await participant(store, SHARED);
    const [first, ...rest] = await sessions(p, 10);
    await first!.pull({});
    for (let i = 0; i < 5; i += 1) await put(first!.notebookDir, `f${i}.md`, `file ${i}\n`);
    expect((await first!.commit({ message: 'five files' })).code).toBe('OK');

    store.clearCalls();
    const pulled = await Promise.all(rest.map((s) => s.pull({})));
    for (const result of pulled) expect(result).toMatchObject({ code: 'OK', filesChanged: 5 });
    // The publication is in the shared database and verified: nine first pulls read only `current`.
    expect(packReads(store).size).toBe(0);
    for (const s of rest) expect(await get(s.notebookDir, 'f3.md')).toBe('file 3\n');

    // A writer of another process publishes; all ten pull at once: one download of its pack.
    const outsider = await participant(store);
    await outsider.service.pull({});
    await put(outsider.dir, 'outside.md', 'from outside\n');
    expect((await outsider.service.commit({ message: 'outside' })).code).toBe('OK');
    store.clearCalls();
    await Promise.all([first!, ...rest].map((s) => s.pull({})));
    const reads = packReads(store);
    expect([...reads.keys()]).toEqual([(await incrementKeys(store)).at(-1)]);
    expect([...reads.values()]).toEqual([1]);
    for (const s of [first!, ...rest])
      expect(await get(s.notebookDir, 'outside.md')).toBe('from outside\n');

    // The directories' own P hold no object database: everything is in the shared one.
    for (const key of await readdir(join(p.privateRoot, 'notebooks')))
      expect(await readdir(join(p.privateRoot, 'notebooks', key, 'git'))).toEqual([]);
    const db = await openObjectDb({ gitdir: sharedGitdir(p.privateRoot, store) });
    for (const head of await recordedHeads(p.privateRoot)) await verifyClosure(db, head);
  });

  it('a group of members in one process fetches none of its own increments', async () => {
    const store = privateStore();
    const p = await participant(store, {
      ...SHARED,
      publicationGateMs: 30_000,
      groupCommit: true,
      groupRecordWait: { idleMs: 120_000, totalMs: 120_000 },
    });
    const members = await sessions(p, 8);
    for (const s of members) await s.pull({});
    store.clearCalls();
    for (const [i, s] of members.entries()) await put(s.notebookDir, `own${i}.md`, `member ${i}\n`);
    const results = await Promise.all(
      members.map((s, i) => s.commit({ message: `own ${i}`, actor: `m${i}` })),
    );
    for (const result of results) expect(result.code).toBe('OK');
    // Every increment was built in this process's database: none is downloaded back.
    expect(packReads(store).size).toBe(0);
    for (const s of members) await s.pull({});
    for (const s of members)
      for (let i = 0; i < members.length; i += 1)
        expect(await get(s.notebookDir, `own${i}.md`)).toBe(`member ${i}\n`);
  });

  it('consolidation over every directory keeps each baseline readable (random calls, full prune after each)', async () => {
    type Step =
      | { kind: 'commit'; who: number; file: number }
      | { kind: 'edit'; who: number; file: number }
      | { kind: 'pull'; who: number };
    const who = fc.nat(4);
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('commit' as const), who, file: fc.nat(3) }),
      fc.record({ kind: fc.constant('edit' as const), who, file: fc.nat(3) }),
      fc.record({ kind: fc.constant('pull' as const), who }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 5 }),
        fc.array(step, { minLength: 5, maxLength: 24 }),
        async (count, steps) => {
          run += 1;
          const store = privateStore();
          // Every call is followed by a full consolidation of the shared database.
          const hub = await participant(store, { ...SHARED, consolidateAlways: true });
          const dirs = await sessions(hub, count);
          // Another process's writer: its increments are imported and pruned in the hub.
          const outsider = await participant(store);
          const writers = [...dirs, outsider.service];
          for (const w of writers) await w.pull({});
          const acknowledged: string[] = [];
          let n = 0;
          for (const s of steps) {
            const writer = writers[s.who % writers.length] as NotebookService;
            n += 1;
            if (s.kind === 'pull') {
              expect((await writer.pull({})).code).toBe('OK');
              continue;
            }
            const line = `w${s.who} r${run} s${n}\n`;
            await appendFile(join(writer.notebookDir, `f${s.file}.md`), line);
            if (s.kind === 'edit') continue;
            const result = await writer.commit({ message: `s${n}` });
            expect(result.code).toBe('OK');
            acknowledged.push(line);
          }
          for (const w of writers) expect((await w.pull({})).code).toBe('OK');
          await hub.service.close();
          const db = await openObjectDb({ gitdir: sharedGitdir(hub.privateRoot, store) });
          for (const head of await recordedHeads(hub.privateRoot)) await verifyClosure(db, head);
          for (const w of writers) {
            const text = (
              await Promise.all(
                Array.from({ length: 4 }, (_, i) => get(w.notebookDir, `f${i}.md`).catch(() => '')),
              )
            ).join('');
            for (const line of acknowledged) expect(text).toContain(line);
          }
        },
      ),
      { numRuns: 8 },
    );
  }, 600_000);

  it('a directory moves from the shared database to its own and back: every call OK, no line lost', async () => {
    const store = privateStore();
    const roots = await tempRoots();
    const dir = join(roots.workspaceRoot, 'notebook');
    const open = (shared: boolean) =>
      openOnRoots(store, roots, { consolidateAlways: true, sharedObjects: shared });
    const lines: string[] = [];
    const commitLine = async (service: NotebookService, line: string) => {
      await appendFile(join(dir, 'log.md'), line);
      expect((await service.commit({ message: line.trim() })).code).toBe('OK');
      lines.push(line);
    };
    const hub = await open(true);
    expect((await hub.pull({})).code).toBe('OK');
    await commitLine(hub, 'hub 1\n');
    await hub.close();

    // A stdio-like service of the same private root: its own database in P, which is empty.
    const alone = await open(false);
    await commitLine(alone, 'alone 1\n');
    expect((await alone.pull({})).code).toBe('OK');
    await alone.close();
    const { baselineHead } = JSON.parse(await readFile(await stateFile(roots.privateRoot), 'utf8'));
    const own = await openObjectDb({ gitdir: join(await pDir(roots.privateRoot), 'git') });
    await verifyClosure(own, baselineHead);

    // Back to the hub: the baseline the other database recorded is restored in the shared one.
    const again = await open(true);
    await commitLine(again, 'hub 2\n');
    expect((await again.pull({})).code).toBe('OK');
    await again.close();
    const text = await get(dir, 'log.md');
    for (const line of lines) expect(text).toContain(line);
    const shared = await openObjectDb({ gitdir: sharedGitdir(roots.privateRoot, store) });
    const after = JSON.parse(await readFile(await stateFile(roots.privateRoot), 'utf8'));
    await verifyClosure(shared, after.baselineHead);
  });

  it('a service started while the holder still runs claims the database once the holder closes', async () => {
    // A hub restarted after a SIGKILL starts beside its exiting predecessor.
    const store = privateStore();
    const first = await participant(store, SHARED);
    await first.service.pull({});
    const { second, infos } = await secondService(store, first, 60_000);
    try {
      const pulled = second.pull({});
      await first.service.close();
      expect((await pulled).code).toBe('OK');
      await put(second.notebookDir, 'b.md', 'second\n');
      expect((await second.commit({ message: 'b' })).code).toBe('OK');
      expect(infos.filter((msg) => msg.includes('not shared'))).toEqual([]);
      expect(await ownDatabasesUsed(first.privateRoot)).toBe(0);
      const shared = await openObjectDb({ gitdir: sharedGitdir(first.privateRoot, store) });
      await verifyClosure(shared, decodeManifest((await store.get('current'))!.body).head);
    } finally {
      await second.close();
    }
  });

  it('a second service on the same private root cannot claim the database and keeps its own', async () => {
    const store = privateStore();
    const first = await participant(store, SHARED);
    // It waits `lockTimeoutMs` for the holder, then gives up.
    const { second, infos } = await secondService(store, first, 1_000);
    try {
      await first.service.pull({});
      await put(first.dir, 'a.md', 'first\n');
      expect((await first.service.commit({ message: 'a' })).code).toBe('OK');
      expect((await second.pull({})).code).toBe('OK');
      await put(second.notebookDir, 'b.md', 'second\n');
      expect((await second.commit({ message: 'b' })).code).toBe('OK');
      expect((await first.service.pull({})).code).toBe('OK');
      expect(await get(first.dir, 'b.md')).toBe('second\n');
      expect(await get(second.notebookDir, 'a.md')).toBe('first\n');
      // One info record, once; the second directory's objects are in its own P.
      await second.pull({ path: second.notebookDir });
      expect(infos.filter((msg) => msg.includes('not shared'))).toHaveLength(1);
      expect(await ownDatabasesUsed(first.privateRoot)).toBe(1);
    } finally {
      await second.close();
    }
  });
});

/** A second service with `sharedObjects` on `first`'s roots, and its info records. */
async function secondService(store: MemoryStore, first: Participant, lockTimeoutMs: number) {
  const { logger, infos } = recordingLogger();
  const second = await openOnRoots(store, first, {
    notebookDir: join(first.workspaceRoot, 'second'),
    lockTimeoutMs,
    sharedObjects: true,
    logger,
  });
  return { second, infos };
}

/** How many directories below `privateRoot` keep objects in a database of their own. */
async function ownDatabasesUsed(privateRoot: string): Promise<number> {
  const keys = await readdir(join(privateRoot, 'notebooks'));
  const own = await Promise.all(
    keys.map((key) => readdir(join(privateRoot, 'notebooks', key, 'git')).catch(() => [])),
  );
  return own.filter((entries) => entries.length > 0).length;
}

/** The only P below `privateRoot`. */
async function pDir(privateRoot: string): Promise<string> {
  const [key] = await readdir(join(privateRoot, 'notebooks'));
  if (key === undefined) throw new Error('no private state');
  return join(privateRoot, 'notebooks', key);
}
