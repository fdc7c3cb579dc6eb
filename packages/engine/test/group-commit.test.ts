/**
 * Group commit (docs/engine.md, "Group commit"): while one writer holds the publication gate,
 * the commits other writers queue on it are published in its turn with one CAS, one commit per
 * member chained in arrival order. The holder's first CAS is held back with the in-memory
 * store's fault injection, so the others queue behind it deterministically.
 */

import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { type FileStat, isDomainError, type SuccessResult } from '@slivingdoc/envelope';
import { blobOid, importPack } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import { createMemoryStore, decodeManifest, type MemoryStore } from '@slivingdoc/store';
import { until } from '@slivingdoc/testkit/until';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuedAt, setInProcessJoins } from '../src/notebook/publication/endpoint';
import { encodeFrame, readFrames } from '../src/notebook/publication/frames';
import { encodeJoin } from '../src/notebook/publication/messages';
import { groupEndpoint } from '../src/notebook/publication/queue';
import { engineFailure, get, type Participant, participant, put, rejection } from './helpers';

// The acknowledgement wait raised from 2 s / 10 s: these tests count CASes, and a member
// starved that long on a loaded machine would attempt alone (one CAS more), correctly.
const GROUPED = {
  publicationGateMs: 30_000,
  groupCommit: true,
  groupRecordWait: { idleMs: 120_000, totalMs: 120_000 },
} as const;

/** A store of its own: the gate's name is machine-wide, and other test files run beside. */
function privateStore(): MemoryStore {
  return createMemoryStore({ prefix: `group-${randomUUID()}` });
}

const casCalls = (store: MemoryStore) =>
  store.calls.filter((c) => c.op === 'replaceIfMatch' || c.op === 'createIfAbsent').length;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function manifestOf(store: MemoryStore) {
  const current = await store.get('current');
  if (current === undefined) throw new Error('no current');
  return decodeManifest(current.body);
}

/** The commits of the last increment, newest first: message text, author, parent. */
async function lastIncrementCommits(store: MemoryStore) {
  const manifest = await manifestOf(store);
  const increment = manifest.increments.at(-1);
  if (increment === undefined) throw new Error('no increment');
  const pack = await store.get(increment.key);
  const db = openMemoryObjectDb();
  // The pack's objects only: every commit of the chain must be in it.
  await importPack(db, (pack as { body: Uint8Array }).body);
  const commits: { message: string; author: string | undefined }[] = [];
  let oid: string | undefined = increment.head;
  while (oid !== undefined && oid !== increment.parent) {
    const commit = await db.readCommit(oid);
    commits.push({ message: Buffer.from(commit.message).toString('utf8'), author: commit.author });
    oid = commit.parent;
  }
  return { commits, reachedParent: oid === increment.parent };
}

/** A member's `join` frame adding `path` (commit message `raw <path>`) on top of `manifest`. */
function joinFrame(manifest: { generation: bigint; head: string }, path: string, text: string) {
  const content = Buffer.from(text);
  const oid = blobOid(content);
  return encodeFrame(
    encodeJoin({
      base: { generation: manifest.generation, head: manifest.head },
      changes: [[path, oid]],
      blobs: new Map([[oid, content]]),
      message: Buffer.from(`raw ${path}`),
      author: undefined,
    }),
  );
}

/**
 * Writers on one store, all pulled after a seed commit. `start()` makes the first writer
 * commit with its CAS held back; `release()` lets it go.
 */
async function writersOn(
  store: MemoryStore,
  count: number,
  options: Parameters<typeof participant>[1] = GROUPED,
) {
  const writers = await Promise.all(
    Array.from({ length: count }, () => participant(store, options)),
  );
  const first = writers[0] as Participant;
  await first.service.pull({});
  await put(first.dir, 'seed.md', 'seed\n');
  await first.service.commit({ message: 'seed' });
  await Promise.all(writers.map((w) => w.service.pull({})));
  const endpoint = groupEndpoint({ store, gateScope: '' });
  return { writers, endpoint };
}

/** The holder commits `holder.md` with its CAS held until the returned `release`. */
async function holderBlockedInCas(store: MemoryStore, holder: Participant) {
  const gate = deferred();
  store.inject({ op: 'replaceIfMatch', action: { type: 'delay', until: gate.promise } });
  store.clearCalls();
  await put(holder.dir, 'holder.md', 'holder\n');
  const result = holder.service.commit({ message: 'holder' });
  await until(() => store.calls.some((c) => c.op === 'replaceIfMatch'), 'the holder sent its CAS');
  return { result, release: gate.resolve };
}

function okFiles(result: SuccessResult): FileStat[] {
  expect(result.code).toBe('OK');
  return result.files;
}

// Every test runs twice: members of this process joining over the socket as other processes
// do, and joining the holder's round in memory (the in-process queue, docs/engine.md).
for (const transport of ['socket', 'in-process'] as const) {
  describe(`group commit (${transport})`, () => {
    beforeAll(() => setInProcessJoins(transport === 'in-process'));
    afterAll(() => setInProcessJoins(true));

    it('publishes a lone writer with one CAS, as without grouping', async () => {
      const store = privateStore();
      const { writers } = await writersOn(store, 1);
      const alone = writers[0] as Participant;
      store.clearCalls();
      await put(alone.dir, 'a.md', 'a\n');
      const result = await alone.service.commit({ message: 'alone' });
      expect(okFiles(result)).toEqual([{ path: 'a.md', insertions: 1, deletions: 0 }]);
      expect(result.generation).toBe(2);
      expect(casCalls(store)).toBe(1);
      expect((await lastIncrementCommits(store)).commits).toEqual([
        { message: 'alone', author: 'slivingdoc' },
      ]);
    });

    for (const size of [1, 2, 10, 100]) {
      it(`publishes a group of ${size} queued writers with one CAS`, async () => {
        const store = privateStore();
        const { writers, endpoint } = await writersOn(store, size + 1);
        const [holder, ...members] = writers as [Participant, ...Participant[]];
        const { result: holderResult, release } = await holderBlockedInCas(store, holder);
        const results = members.map(async (m, i) => {
          await put(m.dir, `notes/m${i}.md`, `member ${i}\nline two\n`);
          return m.service.commit({ message: `member ${i} ✓` });
        });
        await until(() => queuedAt(endpoint) === size, `${size} members queued`);
        release();

        expect((await holderResult).code).toBe('OK');
        const settled = await Promise.all(results);
        // One CAS for the holder's own round, one for the whole group.
        expect(casCalls(store)).toBe(2);
        // Seed (1), the holder's round (2), the group (3).
        expect((await manifestOf(store)).generation).toBe(3n);
        settled.forEach((r, i) => {
          expect(okFiles(r)).toEqual([{ path: `notes/m${i}.md`, insertions: 2, deletions: 0 }]);
          expect(r.generation).toBe(3);
        });
        const history = await lastIncrementCommits(store);
        expect(history.reachedParent).toBe(true);
        expect(history.commits).toHaveLength(size);
        expect(history.commits.map((c) => c.message).sort()).toEqual(
          members.map((_, i) => `member ${i} ✓`).sort(),
        );
        expect(history.commits.every((c) => c.author === 'slivingdoc')).toBe(true);
        // Every member's L holds the whole group's state.
        for (const m of members)
          expect(await get(m.dir, 'notes/m0.md')).toBe('member 0\nline two\n');
      });
    }

    it('leaves out a member that conflicts with R; it gets its own CONTENT_CONFLICT', async () => {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, 3);
      const [holder, clashing, fine] = writers as [Participant, Participant, Participant];
      const gate = deferred();
      store.inject({ op: 'replaceIfMatch', action: { type: 'delay', until: gate.promise } });
      store.clearCalls();
      await put(holder.dir, 'seed.md', 'holder\n');
      const holderResult = holder.service.commit({ message: 'holder' });
      await until(
        () => store.calls.some((c) => c.op === 'replaceIfMatch'),
        'the holder sent its CAS',
      );
      await put(clashing.dir, 'seed.md', 'clash\n');
      await put(fine.dir, 'fine.md', 'fine\n');
      // Awaited from the start: the refused member may answer before the holder does.
      const clashRefused = rejection(clashing.service.commit({ message: 'clash' }));
      const fineResult = fine.service.commit({ message: 'fine' });
      await until(() => queuedAt(endpoint) === 2, 'two members queued');
      gate.resolve();

      expect((await holderResult).code).toBe('OK');
      expect(okFiles(await fineResult)).toEqual([{ path: 'fine.md', insertions: 1, deletions: 0 }]);
      const refused = await clashRefused;
      expect(refused.code).toBe('CONTENT_CONFLICT');
      expect(refused.reason).toBe('MERGE_CONFLICT');
      expect(await get(clashing.dir, 'seed.md')).toContain('<<<<<<<');
      expect(casCalls(store)).toBe(2);
    });

    it('leaves out the later of two members that conflict with each other', async () => {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, 3);
      const [holder, one, two] = writers as [Participant, Participant, Participant];
      const { result: holderResult, release } = await holderBlockedInCas(store, holder);
      await put(one.dir, 'seed.md', 'one\n');
      await put(two.dir, 'seed.md', 'two\n');
      const results = [one, two].map((w, i) => w.service.commit({ message: `w${i}` }));
      // Settled from the start: the refused member may answer before the holder does.
      const allSettled = Promise.allSettled(results);
      await until(() => queuedAt(endpoint) === 2, 'two members queued');
      release();

      expect((await holderResult).code).toBe('OK');
      const settled = await allSettled;
      const ok = settled.filter((s) => s.status === 'fulfilled');
      const refused = settled.filter((s) => s.status === 'rejected');
      expect(ok).toHaveLength(1);
      expect(refused).toHaveLength(1);
      const reason = (refused[0] as PromiseRejectedResult).reason;
      expect(isDomainError(reason) && reason.code).toBe('CONTENT_CONFLICT');
      expect(casCalls(store)).toBe(2);
    });

    /** Holder blocked in CAS, `count` members queued, the group then blocked at its upload. */
    async function groupBlockedAtUpload(
      count: number,
      options: Parameters<typeof participant>[1] = GROUPED,
    ) {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, count + 1, options);
      const [holder, ...members] = writers as [Participant, ...Participant[]];
      const { result: holderResult, release } = await holderBlockedInCas(store, holder);
      const controllers = members.map(() => new AbortController());
      const results = members.map(async (m, i) => {
        await put(m.dir, `m${i}.md`, `member ${i}\n`);
        return m.service.commit({
          message: `m${i}`,
          signal: (controllers[i] as AbortController).signal,
        });
      });
      await until(() => queuedAt(endpoint) === count, `${count} members queued`);
      const upload = deferred();
      store.inject({ op: 'putImmutable', action: { type: 'delay', until: upload.promise } });
      const uploadsBefore = store.calls.filter((c) => c.op === 'putImmutable').length;
      release();
      await until(
        () => store.calls.filter((c) => c.op === 'putImmutable').length > uploadsBefore,
        'the group uploads its pack',
      );
      // The holder answers its own call once its turn, the group's round included, is over.
      const holderDone = holderResult.then((r) => expect(r.code).toBe('OK'));
      return { store, writers, members, results, controllers, release: upload.resolve, holderDone };
    }

    it('re-merges the group on the new R after a lost race; a member that now conflicts drops out', async () => {
      // git's rule for add/add (under `keep` two new m2.md files would merge, R's first).
      const options = { ...GROUPED, mergeAdditions: 'conflict' } as const;
      const { store, members, results, release, holderDone } = await groupBlockedAtUpload(
        3,
        options,
      );
      // Another "host" (a different gate scope) wins meanwhile, adding its own m2.md.
      const other = await participant(store, { ...options, gateScope: 'other-host' });
      await other.service.pull({});
      await put(other.dir, 'm2.md', 'other host\n');
      expect((await other.service.commit({ message: 'other' })).code).toBe('OK');
      const casBefore = casCalls(store);
      release();

      const settled = await Promise.allSettled(results);
      await holderDone;
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      const reason = (settled[2] as PromiseRejectedResult).reason;
      expect(isDomainError(reason) && reason.code).toBe('CONTENT_CONFLICT');
      // The lost CAS, then the re-merged group's (m2's own attempt only writes markers).
      expect(casCalls(store) - casBefore).toBe(2);
      const history = await lastIncrementCommits(store);
      expect(history.commits.map((c) => c.message).sort()).toEqual(['m0', 'm1']);
      for (const [i, s] of settled.slice(0, 2).entries()) {
        const r = (s as PromiseFulfilledResult<SuccessResult>).value;
        expect(r.files).toEqual([{ path: `m${i}.md`, insertions: 1, deletions: 0 }]);
        expect(r.generation).toBe(Number((await manifestOf(store)).generation));
      }
      expect(await get(members[0]!.dir, 'm2.md')).toBe('other host\n');
    });

    it('resolves an ambiguous CAS answer for the whole group through its publication id', async () => {
      const { store, results, release, holderDone } = await groupBlockedAtUpload(3);
      store.inject({ op: 'replaceIfMatch', action: { type: 'lose-response' } });
      release();
      const settled = await Promise.all(results);
      await holderDone;
      expect(settled.map((r) => r.code)).toEqual(['OK', 'OK', 'OK']);
      expect(casCalls(store)).toBe(2);
      const history = await lastIncrementCommits(store);
      expect(history.commits).toHaveLength(3);
    });

    it('answers every member PUBLICATION_UNPROVEN when the group outcome cannot be proven', async () => {
      const { store, results, release, holderDone } = await groupBlockedAtUpload(2);
      store.inject({ op: 'replaceIfMatch', action: { type: 'fail', kind: 'ambiguous' } });
      // The resolution's read of current fails too, and then succeeds on retries.
      store.inject({ op: 'get', key: 'current', action: { type: 'fail', kind: 'unreachable' } });
      release();
      const settled = Promise.allSettled(results);
      await holderDone;
      for (const r of await settled) {
        expect(r.status).toBe('rejected');
        const reason = (r as PromiseRejectedResult).reason;
        expect(isDomainError(reason) && reason.reason).toBe('PUBLICATION_UNPROVEN');
      }
    });

    it('withdraws a member cancelled before the holder took its change', async () => {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, 3);
      const [holder, quitter, stayer] = writers as [Participant, Participant, Participant];
      const { result: holderResult, release } = await holderBlockedInCas(store, holder);
      const controller = new AbortController();
      await put(quitter.dir, 'quit.md', 'quit\n');
      await put(stayer.dir, 'stay.md', 'stay\n');
      const quit = quitter.service.commit({ message: 'quit', signal: controller.signal });
      const stay = stayer.service.commit({ message: 'stay' });
      await until(() => queuedAt(endpoint) === 2, 'two members queued');
      controller.abort(new Error('cancelled by test'));
      expect(await rejection(quit)).toBe(controller.signal.reason);
      await until(() => queuedAt(endpoint) === 1, 'the cancelled member withdrew');
      release();
      expect((await holderResult).code).toBe('OK');
      expect((await stay).code).toBe('OK');
      const history = await lastIncrementCommits(store);
      expect(history.commits.map((c) => c.message)).toEqual(['stay']);
      // Nothing of the withdrawn commit was published; its L still holds the edit.
      expect(await get(quitter.dir, 'quit.md')).toBe('quit\n');
      expect((await quitter.service.commit({ message: 'quit again' })).code).toBe('OK');
    });

    it('publishes a member cancelled after the holder took its change; only its result is discarded', async () => {
      const { store, members, results, controllers, release, holderDone } =
        await groupBlockedAtUpload(2);
      (controllers[0] as AbortController).abort(new Error('cancelled by test'));
      release();
      const [cancelled, kept] = await Promise.allSettled(results);
      await holderDone;
      expect(cancelled?.status).toBe('rejected');
      expect((cancelled as PromiseRejectedResult).reason).toBe(controllers[0]?.signal.reason);
      expect(kept?.status).toBe('fulfilled');
      const history = await lastIncrementCommits(store);
      expect(history.commits.map((c) => c.message).sort()).toEqual(['m0', 'm1']);
      // L and P agree: the next commit has nothing to publish and reports the same generation.
      const again = await members[0]!.service.commit({ message: 'nothing new' });
      expect(again.files).toEqual([]);
      expect(again.generation).toBe(Number((await manifestOf(store)).generation));
    });

    /** A raw connection to the group endpoint, standing in for a member process. */
    function rawMember(endpoint: string): Promise<Socket> {
      return new Promise((resolve, reject) => {
        const socket = connect(endpoint);
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      });
    }

    it('survives malformed, oversized and vanishing members; a taken member that vanished is left out', async () => {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, 2);
      const [holder, member] = writers as [Participant, Participant];
      const { result: holderResult, release } = await holderBlockedInCas(store, holder);
      const manifest = await manifestOf(store);
      const joinOf = (path: string, text: string) => joinFrame(manifest, path, text);
      const oversized = await rawMember(endpoint);
      const header = Buffer.alloc(4);
      header.writeUInt32BE(0xffffffff, 0);
      oversized.write(header);
      const garbage = await rawMember(endpoint);
      const body = Buffer.from('{not json');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(body.byteLength, 0);
      garbage.write(Buffer.concat([length, body]));
      const badJoin = await rawMember(endpoint);
      badJoin.write(encodeFrame({ t: 'join', base: { generation: '1', head: 'nope' } }));
      const quitter = await rawMember(endpoint);
      quitter.write(joinOf('quitter.md', 'quitter\n'));
      const vanishing = await rawMember(endpoint);
      vanishing.write(joinOf('vanished.md', 'vanished\n'));
      vanishing.on('data', () => vanishing.destroy());
      for (const socket of [oversized, garbage, badJoin]) socket.on('error', () => {});
      await until(() => queuedAt(endpoint) === 2, 'two raw members queued');
      quitter.destroy();
      await until(() => queuedAt(endpoint) === 1, 'the quitter dropped');
      await put(member.dir, 'member.md', 'member\n');
      const memberResult = member.service.commit({ message: 'member' });
      await until(() => queuedAt(endpoint) === 2, 'the member queued');
      release();

      expect((await holderResult).code).toBe('OK');
      expect((await memberResult).code).toBe('OK');
      const history = await lastIncrementCommits(store);
      // It vanished before it could acknowledge `prepared`: its change must not land unrecorded.
      expect(history.commits.map((c) => c.message)).toEqual(['member']);
      await expect(get(member.dir, 'vanished.md')).rejects.toMatchObject({ code: 'ENOENT' });
    });

    /**
     * The holder blocked in its first CAS; a raw member (adding `raw.md`) that reacts to each
     * holder message with `react`, and a real member (adding `member.md`) queued behind it.
     */
    // For the tests about the acknowledgement wait itself: the raw member never acknowledges
    // (in time, or at all), so the holder must give up on it.
    const ACK_WAIT_SHORT = { ...GROUPED, groupRecordWait: { idleMs: 200, totalMs: 1_000 } };

    async function rawBesideMember(
      react: (message: Record<string, unknown>, socket: Socket) => void,
      options: Parameters<typeof participant>[1] = GROUPED,
    ) {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, 2, options);
      const [holder, member] = writers as [Participant, Participant];
      const { result: holderResult, release } = await holderBlockedInCas(store, holder);
      const raw = await rawMember(endpoint);
      raw.on('error', () => {});
      const heard: Record<string, unknown>[] = [];
      const closed = new Promise<void>((resolve) => raw.once('close', () => resolve()));
      readFrames(
        raw,
        (message) => {
          heard.push(message);
          react(message, raw);
        },
        () => {},
      );
      raw.write(joinFrame(await manifestOf(store), 'raw.md', 'raw\n'));
      await until(() => queuedAt(endpoint) === 1, 'the raw member queued');
      await put(member.dir, 'member.md', 'member\n');
      const memberResult = member.service.commit({ message: 'member' });
      await until(() => queuedAt(endpoint) === 2, 'the member queued');
      store.clearCalls();
      release();
      expect((await holderResult).code).toBe('OK');
      expect(okFiles(await memberResult)).toEqual([
        { path: 'member.md', insertions: 1, deletions: 0 },
      ]);
      await closed;
      const published = (await lastIncrementCommits(store)).commits.map((c) => c.message).sort();
      return { store, member, heard, published, types: heard.map((m) => m.t) };
    }

    const recordedFrame = (message: Record<string, unknown>) =>
      encodeFrame({ t: 'recorded', publication: message.publication });

    it('publishes a member once it acknowledged prepared (recorded its publication input)', async () => {
      const { store, member, published, types } = await rawBesideMember((message, socket) => {
        if (message.t === 'prepared') socket.write(recordedFrame(message));
      });
      expect(types).toEqual(['taken', 'prepared', 'accepted']);
      expect(published).toEqual(['member', 'raw raw.md']);
      // The holder's own CAS (let go), then the group's: one CAS for both members.
      expect(casCalls(store)).toBe(1);
      expect(await get(member.dir, 'raw.md')).toBe('raw\n');
    });

    it('leaves out a member gone after prepared and before its ack; the rest publish at once', async () => {
      // No retries at all: a withheld attempt lost no race and uses none.
      const { store, published, types } = await rawBesideMember(
        (message, socket) => {
          if (message.t === 'prepared') socket.destroy();
        },
        { ...GROUPED, commitRetries: 0 },
      );
      expect(types).toEqual(['taken', 'prepared']);
      expect(published).toEqual(['member']);
      // The attempt that carried it was withheld (no CAS sent), the re-merged one published.
      expect(casCalls(store)).toBe(1);
    });

    it('leaves out a member whose ack comes after the wait; it is told to attempt alone', async () => {
      let lateAck: Record<string, unknown> | undefined;
      const { store, published, types } = await rawBesideMember((message, socket) => {
        if (message.t === 'prepared') lateAck = message;
        // Acknowledged only once the holder gave up on it: changes nothing.
        else if (message.t === 'excluded' && lateAck) socket.write(recordedFrame(lateAck));
      }, ACK_WAIT_SHORT);
      expect(types).toEqual(['taken', 'prepared', 'excluded']);
      expect(published).toEqual(['member']);
      expect(casCalls(store)).toBe(1);
    });

    it('drops a member whose ack is malformed or names another publication', async () => {
      const malformed = await rawBesideMember((message, socket) => {
        if (message.t === 'prepared') socket.write(encodeFrame({ t: 'recorded', publication: 7 }));
      }, ACK_WAIT_SHORT);
      expect(malformed.types).toEqual(['taken', 'prepared']);
      expect(malformed.published).toEqual(['member']);
      const stale = await rawBesideMember((message, socket) => {
        if (message.t === 'prepared')
          socket.write(recordedFrame({ ...message, publication: 'another' }));
      }, ACK_WAIT_SHORT);
      expect(stale.types).toEqual(['taken', 'prepared', 'excluded']);
      expect(stale.published).toEqual(['member']);
    });

    it("a member records its publication input in P before the group's CAS is sent", async () => {
      const { store, members, results, release, holderDone } = await groupBlockedAtUpload(1);
      const groupCas = deferred();
      store.inject({ op: 'replaceIfMatch', action: { type: 'delay', until: groupCas.promise } });
      const casBefore = casCalls(store);
      release();
      await until(() => casCalls(store) > casBefore, "the group's CAS is sent");
      const [member] = members as [Participant];
      const target = JSON.parse(await get(await privateDirOf(member), 'target.json'));
      const input = target.rewrites.at(-1);
      expect(input.input).toBe(true);
      expect(input.changes).toEqual([['m0.md', blobOid(Buffer.from('member 0\n'))]]);
      expect(input.next.generation).toBe(String((await manifestOf(store)).generation + 1n));
      groupCas.resolve();
      const [result] = await Promise.all(results);
      await holderDone;
      expect(okFiles(result as SuccessResult)).toEqual([
        { path: 'm0.md', insertions: 1, deletions: 0 },
      ]);
      // The group's head, the record's `next`, is what `current` now names.
      expect(input.next.head).toBe((await manifestOf(store)).head);
    });

    it('answers a member that cannot record its input with the failure; its change is not published', async () => {
      const store = privateStore();
      const { writers, endpoint } = await writersOn(store, 3);
      const [holder, broken, fine] = writers as [Participant, Participant, Participant];
      const { result: holderResult, release } = await holderBlockedInCas(store, holder);
      // A directory where the record goes: writing it fails (rename over a directory).
      const record = join(await privateDirOf(broken), 'target.json');
      await rm(record, { force: true });
      await mkdir(join(record, 'in-the-way'), { recursive: true });
      await put(broken.dir, 'broken.md', 'broken\n');
      await put(fine.dir, 'fine.md', 'fine\n');
      const brokenRefused = engineFailure(broken.service.commit({ message: 'broken' }));
      const fineResult = fine.service.commit({ message: 'fine' });
      await until(() => queuedAt(endpoint) === 2, 'two members queued');
      release();
      expect((await holderResult).code).toBe('OK');
      expect((await fineResult).code).toBe('OK');
      const refused = await brokenRefused;
      expect(refused.code).toBe('ENGINE_FAILED');
      expect((await lastIncrementCommits(store)).commits.map((c) => c.message)).toEqual(['fine']);
      // Its edit stays in L, unpublished.
      expect(await get(broken.dir, 'broken.md')).toBe('broken\n');
    });
  });
}

/** The one P directory below a participant's private root. */
async function privateDirOf(p: Participant): Promise<string> {
  const notebooks = join(p.privateRoot, 'notebooks');
  const [key] = await readdir(notebooks);
  return join(notebooks, key as string);
}
