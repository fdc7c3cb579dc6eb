import { join } from 'node:path';
import { REVIEW_KEY, StoreError } from '@slivingdoc/store';
import { describe, expect, it } from 'vitest';
import {
  createEmbeddedStore,
  DECIDED_RETENTION_MS,
  FAILPOINT,
  FailpointRegistry,
  listProposals,
  type NotebookService,
  type ObjectStore,
  pruneDecided,
  rejectProposal,
  requireProposal,
  setReview,
  showReview,
} from '../src/index';
import { engineFailure, get, memoryStore, participant, put, rejection, tempRoots } from './helpers';

/** A person (CLI commits, approvals) and an agent (tool commits) on one store. */
async function personAndAgent(store: ObjectStore, personExtra = {}) {
  const person = await participant(store, personExtra);
  const agent = await participant(store);
  await person.service.pull({});
  await put(person.dir, 'decisions/a.md', 'one\ntwo\nthree\n');
  await person.service.commit({ message: 'seed', actor: 'ann' });
  await agent.service.pull({});
  return { person, agent };
}

const agentCommit = (service: NotebookService, message = 'agent change') =>
  service.commit({ message, actor: 'bot', viaTools: true });

/** `store`, except that each read of the review setting returns through `onRead`. */
function onReviewRead(store: ObjectStore, onRead: () => Promise<void>): ObjectStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'get') {
        return async (key: string) => {
          const found = await target.get(key);
          if (key === REVIEW_KEY) await onRead();
          return found;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function embeddedStore(): Promise<ObjectStore> {
  const { base } = await tempRoots();
  return createEmbeddedStore({ dir: join(base, 'store'), prefix: 'nb' });
}

describe.each([
  ['memory store', async () => memoryStore() as ObjectStore],
  ['embedded store', embeddedStore],
])('review on the %s', (_name, makeStore) => {
  it('queue → pending → approve publishes once, authored by the agent, approver recorded', async () => {
    const store = await makeStore();
    const { person, agent } = await personAndAgent(store);
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\n');
    const pending = await agentCommit(agent.service);
    expect(pending).toMatchObject({ code: 'OK', status: 'pending', revision: 1, generation: 1 });
    expect(await person.service.acceptedGeneration()).toBe(1);
    // A retry changes nothing but the revision: one open proposal per directory.
    const again = await agentCommit(agent.service);
    expect(again).toMatchObject({ proposalId: pending.proposalId, revision: 2 });
    expect((await listProposals(store)).length).toBe(1);
    // status shows the open proposal; the edits stay unpublished in the directory.
    expect(await agent.service.status({})).toMatchObject({
      state: 'changed',
      proposal: { id: pending.proposalId, revision: 2, state: 'open' },
    });
    // A person's CLI commit is never queued.
    await put(person.dir, 'decisions/b.md', 'b\n');
    expect(await person.service.commit({ message: 'b', actor: 'ann' })).toMatchObject({
      generation: 2,
    });
    expect(
      await rejection(
        person.service.approve({ id: pending.proposalId!, actor: 'ann', revision: 1 }),
      ),
    ).toMatchObject({ code: 'REVIEW', reason: 'STALE_REVISION' });
    const approved = await person.service.approve({
      id: pending.proposalId!,
      actor: 'ann',
      revision: 2,
    });
    expect(approved).toMatchObject({ generation: 3, filesChanged: 1 });
    expect(approved.approved).toMatchObject({
      state: 'approved',
      decision: { by: 'ann', generation: '3', revision: 2 },
    });
    expect((await agent.service.status({})).proposal).toMatchObject({ state: 'approved' });
    const log = await person.service.log({ limit: 1 });
    expect(log.publications[0]).toMatchObject({ actor: 'bot' });
    expect(JSON.stringify(log.publications[0])).toContain('Approved-by: ann');
    expect(
      await rejection(person.service.approve({ id: pending.proposalId!, actor: 'zed' })),
    ).toMatchObject({ code: 'REVIEW', reason: 'PROPOSAL_DECIDED' });
    // The agent kept editing the approved file; its next pull reports the approval and merges
    // without a conflict against itself.
    await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\nfour\n');
    const pulled = await agent.service.pull({});
    expect(pulled.proposalOutcome).toMatchObject({
      status: 'approved',
      by: 'ann',
      generation: '3',
    });
    expect(await get(agent.dir, 'decisions/a.md')).toBe('one\nTWO\nthree\nfour\n');
    expect(await get(agent.dir, 'decisions/b.md')).toBe('b\n');
    // Reported once.
    expect((await agent.service.pull({})).proposalOutcome).toBeUndefined();
    expect((await agent.service.status({})).proposal).toBeNull();
  });

  it('queue → pending → reject publishes nothing, keeps the bytes, tells the agent once', async () => {
    const store = await makeStore();
    const { person, agent } = await personAndAgent(store);
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'rejected bytes\n');
    const pending = await agentCommit(agent.service);
    const id = pending.proposalId!;
    const rejected = await rejectProposal(store, { id, by: 'ann', reason: 'not now' });
    expect(rejected).toMatchObject({ state: 'rejected', decision: { reason: 'not now' } });
    expect(await person.service.acceptedGeneration()).toBe(1);
    const kept = await requireProposal(store, id);
    expect(Buffer.from(kept.record.files[0]!.content!).toString()).toBe('rejected bytes\n');
    expect(await rejection(rejectProposal(store, { id, by: 'ann' }))).toMatchObject({
      reason: 'PROPOSAL_DECIDED',
    });
    // The next commit reports the rejection and proposes nothing; the one after proposes anew.
    const told = await agentCommit(agent.service);
    expect(told.status).toBeUndefined();
    expect(told.proposalOutcome).toMatchObject({ status: 'rejected', reason: 'not now' });
    expect(await get(agent.dir, 'decisions/a.md')).toBe('rejected bytes\n');
    const anew = await agentCommit(agent.service);
    expect(anew).toMatchObject({ status: 'pending', revision: 1 });
    expect(anew.proposalId).not.toBe(id);
  });
});

describe('review rules', () => {
  it('--paths scopes review: a commit touching a queued path is proposed whole', async () => {
    const store = memoryStore();
    const { agent } = await personAndAgent(store);
    await setReview(store, { mode: 'queue', paths: ['decisions'] });
    await put(agent.dir, 'scratch/x.md', 'x\n');
    expect((await agentCommit(agent.service)).status).toBeUndefined();
    await put(agent.dir, 'scratch/y.md', 'y\n');
    await put(agent.dir, 'decisions/a.md', 'changed\n');
    const pending = await agentCommit(agent.service);
    expect(pending).toMatchObject({ status: 'pending', filesChanged: 2 });
  });

  it('--actor binds only authenticated actors; a floor of queue is stricter than the notebook', async () => {
    const store = memoryStore();
    const { person } = await personAndAgent(store);
    await setReview(store, { mode: 'queue', actor: 'bot' });
    const stdio = await person.service.session({ notebookDir: join(person.workspaceRoot, 's') });
    const hub = await person.service.session({
      notebookDir: join(person.workspaceRoot, 'h'),
      review: { authenticated: true },
    });
    const strict = await person.service.session({
      notebookDir: join(person.workspaceRoot, 't'),
      review: { authenticated: true, floor: 'queue' },
    });
    for (const s of [stdio, hub, strict]) {
      await s.pull({});
      await put(s.notebookDir, `${s === stdio ? 's' : s === hub ? 'h' : 't'}.md`, 'x\n');
    }
    expect((await stdio.commit({ message: 'm', actor: 'bot', viaTools: true })).status).toBe(
      undefined,
    );
    expect((await hub.commit({ message: 'm', actor: 'bot', viaTools: true })).status).toBe(
      'pending',
    );
    expect((await strict.commit({ message: 'm', actor: 'eve', viaTools: true })).status).toBe(
      'pending',
    );
    expect(await hub.reviewApplies({ actor: 'bot' })).toBe(true);
    expect(await hub.reviewApplies({ actor: 'eve' })).toBe(false);
    expect(await stdio.reviewApplies({ actor: 'bot' })).toBe(false);
  });

  it('a mode change takes effect at the next commit, without a restart', async () => {
    const store = memoryStore();
    const { agent } = await personAndAgent(store);
    await put(agent.dir, 'decisions/a.md', '1\n');
    expect((await agentCommit(agent.service)).status).toBeUndefined();
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', '2\n');
    expect((await agentCommit(agent.service)).status).toBe('pending');
    await setReview(store, { mode: 'direct' });
    expect(await showReview(store)).toMatchObject({
      state: 'stored',
      setting: { notebook: { mode: 'direct' } },
    });
  });

  it('the boundary: a commit that read direct before `review set queue` returned still publishes', async () => {
    const store = memoryStore();
    let reached!: () => void;
    const readDone = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let armed = false;
    const person = await participant(store);
    const agent = await participant(
      onReviewRead(store, async () => {
        if (!armed) return;
        armed = false;
        // The commit's read happens now (direct: nothing stored); held until the set returned.
        reached();
        await held;
      }),
    );
    await person.service.pull({});
    await agent.service.pull({});
    await put(agent.dir, 'a.md', 'read direct\n');
    armed = true;
    const committing = agentCommit(agent.service);
    await readDone;
    await setReview(store, { mode: 'queue' });
    release();
    const landed = await committing;
    expect(landed.status).toBeUndefined();
    expect(landed.generation).toBe(1);
    await put(agent.dir, 'a.md', 'read queue\n');
    expect((await agentCommit(agent.service)).status).toBe('pending');
    expect(await person.service.acceptedGeneration()).toBe(1);
  });

  it('a review setting that cannot be read refuses tool commits with the store error', async () => {
    const store = memoryStore();
    const person = await participant(store);
    const agent = await participant(
      onReviewRead(store, () =>
        Promise.reject(
          new StoreError('access-denied', 'GET review: 403', { code: 'AccessDenied' }),
        ),
      ),
    );
    await person.service.pull({});
    await agent.service.pull({});
    await put(agent.dir, 'a.md', 'x\n');
    expect(await rejection(agentCommit(agent.service))).toMatchObject({
      code: 'STORAGE_FAILURE',
    });
    expect(await person.service.acceptedGeneration()).toBe(0);
    expect(await get(agent.dir, 'a.md')).toBe('x\n');
    // A person's commit does not read the setting.
    await put(person.dir, 'p.md', 'p\n');
    expect((await person.service.commit({ message: 'p', actor: 'ann' })).generation).toBe(1);
  });

  it('an unparsable review setting refuses tool commits (fail closed), never falls back', async () => {
    const store = memoryStore();
    const { agent, person } = await personAndAgent(store);
    await store.createIfAbsent('review', new TextEncoder().encode('{"version":1,'));
    await put(agent.dir, 'decisions/a.md', 'x\n');
    expect(await rejection(agentCommit(agent.service))).toMatchObject({
      code: 'REVIEW',
      reason: 'SETTING_INVALID',
    });
    expect(await person.service.acceptedGeneration()).toBe(1);
    expect(await showReview(store)).toMatchObject({ state: 'invalid' });
    // A person repairs it by setting a mode.
    await setReview(store, { mode: 'direct' });
    expect((await agentCommit(agent.service)).generation).toBe(2);
  });

  it('bad ids and malformed records get clear errors and change nothing', async () => {
    const store = memoryStore();
    const { person } = await personAndAgent(store);
    expect(
      await rejection(person.service.approve({ id: '0123456789abcdef-1', actor: 'ann' })),
    ).toMatchObject({ code: 'REVIEW', reason: 'PROPOSAL_NOT_FOUND' });
    expect(await rejection(rejectProposal(store, { id: '../current', by: 'ann' }))).toMatchObject({
      reason: 'PROPOSAL_NOT_FOUND',
    });
    await store.createIfAbsent('proposals/0123456789abcdef-1', new TextEncoder().encode('[]'));
    expect(
      await rejection(rejectProposal(store, { id: '0123456789abcdef-1', by: 'ann' })),
    ).toMatchObject({ code: 'REVIEW', reason: 'PROPOSAL_MALFORMED' });
    expect(await listProposals(store)).toMatchObject([{ id: '0123456789abcdef-1' }]);
  });
});

describe('the proposals cleanup', () => {
  it('deletes decided proposals past the retention, keeps open ones', async () => {
    const store = memoryStore();
    const { agent } = await personAndAgent(store);
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'x\n');
    const first = await agentCommit(agent.service);
    await rejectProposal(store, { id: first.proposalId!, by: 'ann' });
    await agentCommit(agent.service); // reports the rejection
    const second = await agentCommit(agent.service);
    expect(await pruneDecided(store)).toBe(0);
    const later = Date.now() + DECIDED_RETENTION_MS + 60_000;
    expect(await pruneDecided(store, later)).toBe(1);
    expect((await listProposals(store)).map((p) => p.id)).toEqual([second.proposalId]);
  });
});

describe('approve under faults and races', () => {
  it.each([FAILPOINT.approveAfterMark, FAILPOINT.approveAfterPublish])(
    'a failure at %s, then a retry: published exactly once, the proposal never lost',
    async (point) => {
      const store = memoryStore();
      const failpoints = new FailpointRegistry();
      const { person, agent } = await personAndAgent(store, { failpoints });
      await setReview(store, { mode: 'queue' });
      await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\n');
      const { proposalId } = await agentCommit(agent.service);
      failpoints.set(point, 'throw', 1);
      await engineFailure(person.service.approve({ id: proposalId!, actor: 'ann' }));
      expect((await requireProposal(store, proposalId!)).record.state).toBe('open');
      const approved = await person.service.approve({ id: proposalId!, actor: 'ann' });
      expect(approved.approved.state).toBe('approved');
      expect(await person.service.acceptedGeneration()).toBe(2);
      const log = await person.service.log({ limit: 5 });
      expect(log.publications.filter((p) => p.actor === 'bot')).toHaveLength(1);
    },
  );

  it('an approval racing a new commit: the revision waits, nothing is lost', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const { person, agent } = await personAndAgent(store, { failpoints });
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\n');
    const { proposalId } = await agentCommit(agent.service);
    let raced: unknown;
    failpoints.set(
      FAILPOINT.approveAfterMark,
      async () => {
        await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\nFOUR\n');
        raced = await rejection(agentCommit(agent.service));
      },
      1,
    );
    const approved = await person.service.approve({ id: proposalId!, actor: 'ann' });
    expect(raced).toMatchObject({ code: 'REVIEW', reason: 'PROPOSAL_BEING_APPROVED' });
    expect(approved.approved).toMatchObject({ state: 'approved', decision: { revision: 1 } });
    // The next commit reports the approval, merges it in, and proposes only what is left.
    const next = await agentCommit(agent.service);
    expect(next).toMatchObject({
      status: 'pending',
      proposalOutcome: { status: 'approved' },
      files: [{ path: 'decisions/a.md', insertions: 1, deletions: 0 }],
    });
    expect(await get(agent.dir, 'decisions/a.md')).toBe('one\nTWO\nthree\nFOUR\n');
  });

  it('two concurrent approvals: one wins, the other is told', async () => {
    const store = memoryStore();
    const { person, agent } = await personAndAgent(store);
    const second = await participant(store);
    await second.service.pull({});
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\n');
    const { proposalId } = await agentCommit(agent.service);
    const outcomes = await Promise.allSettled([
      person.service.approve({ id: proposalId!, actor: 'ann' }),
      second.service.approve({ id: proposalId!, actor: 'ben' }),
    ]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const told = outcomes.filter((o) => o.status === 'rejected');
    expect([won.length, told.length]).toEqual([1, 1]);
    expect((told[0] as PromiseRejectedResult).reason).toMatchObject({
      reason: 'PROPOSAL_DECIDED',
    });
    expect(await person.service.acceptedGeneration()).toBe(2);
  });

  it("an approval leaves the reviewer's clean copy at its baseline; its next pull catches up", async () => {
    const store = memoryStore();
    const { person, agent } = await personAndAgent(store);
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'one\nTWO\nthree\n');
    const first = await agentCommit(agent.service);
    expect(await person.service.approve({ id: first.proposalId!, actor: 'ann' })).toMatchObject({
      generation: 2,
      filesChanged: 1,
    });
    expect(await get(person.dir, 'decisions/a.md')).toBe('one\ntwo\nthree\n');
    expect(await person.service.status({})).toMatchObject({
      state: 'clean',
      baselineGeneration: 1,
      storeGeneration: 2,
    });
    // Approving again through the same copy, still at its old baseline, merges onto the head.
    await agent.service.pull({});
    await put(agent.dir, 'decisions/c.md', 'c\n');
    const second = await agentCommit(agent.service);
    expect(await person.service.approve({ id: second.proposalId!, actor: 'ann' })).toMatchObject({
      generation: 3,
      filesChanged: 1,
    });
    await person.service.pull({});
    expect(await get(person.dir, 'decisions/a.md')).toBe('one\nTWO\nthree\n');
    expect(await get(person.dir, 'decisions/c.md')).toBe('c\n');
    expect(await person.service.status({})).toMatchObject({
      state: 'clean',
      baselineGeneration: 3,
    });
  });

  it('an approval whose head moves to a conflict before its swap publishes nothing, keeps it open', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    // Its own gate scope: the racing commit below runs while the approval holds its gate.
    const { person, agent } = await personAndAgent(store, { failpoints, gateScope: 'reviewer' });
    const other = await participant(store);
    await other.service.pull({});
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'one\nAGENT\nthree\n');
    const { proposalId } = await agentCommit(agent.service);
    // The approval reads R before it marks and again when it publishes: the second time, another
    // participant publishes a conflicting line, so the approval's swap loses and its merge conflicts.
    let reads = 0;
    failpoints.set(FAILPOINT.afterReadCurrent, async () => {
      reads += 1;
      if (reads !== 2) return;
      await put(other.dir, 'decisions/a.md', 'one\nOTHER\nthree\n');
      await other.service.commit({ message: 'other', actor: 'ben' });
    });
    expect(
      await rejection(person.service.approve({ id: proposalId!, actor: 'ann' })),
    ).toMatchObject({ code: 'CONTENT_CONFLICT', files: [{ path: 'decisions/a.md' }] });
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(await person.service.acceptedGeneration()).toBe(2);
    expect(await get(person.dir, 'decisions/a.md')).toBe('one\ntwo\nthree\n');
    const stored = await requireProposal(store, proposalId!);
    expect(stored.record).toMatchObject({ state: 'open' });
    expect(stored.record.approving).toBeUndefined();
  });

  it('an approval touching paths read-only for the approver publishes nothing, keeps it open', async () => {
    const store = memoryStore();
    const { person, agent } = await personAndAgent(store, { readOnly: ['ref'] });
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'ref/x.md', 'x\n');
    const { proposalId } = await agentCommit(agent.service);
    expect(
      await rejection(person.service.approve({ id: proposalId!, actor: 'ann' })),
    ).toMatchObject({ code: 'READ_ONLY_PATH', files: [{ path: 'ref/x.md' }] });
    expect(await person.service.acceptedGeneration()).toBe(1);
    const stored = await requireProposal(store, proposalId!);
    expect(stored.record).toMatchObject({ state: 'open' });
    expect(stored.record.approving).toBeUndefined();
  });

  it('an approval that conflicts publishes nothing, names the file, keeps the proposal open', async () => {
    const store = memoryStore();
    const { person, agent } = await personAndAgent(store);
    await setReview(store, { mode: 'queue' });
    await put(agent.dir, 'decisions/a.md', 'one\nAGENT\nthree\n');
    const { proposalId } = await agentCommit(agent.service);
    await put(person.dir, 'decisions/a.md', 'one\nPERSON\nthree\n');
    await person.service.commit({ message: 'p', actor: 'ann' });
    expect(
      await rejection(person.service.approve({ id: proposalId!, actor: 'ann' })),
    ).toMatchObject({
      code: 'CONTENT_CONFLICT',
      files: [{ path: 'decisions/a.md' }],
    });
    expect(await person.service.acceptedGeneration()).toBe(2);
    expect(await get(person.dir, 'decisions/a.md')).toBe('one\nPERSON\nthree\n');
    const stored = await requireProposal(store, proposalId!);
    expect(stored.record).toMatchObject({ state: 'open' });
    expect(stored.record.approving).toBeUndefined();
  });
});
