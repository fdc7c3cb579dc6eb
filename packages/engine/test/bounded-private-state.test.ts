/**
 * P's object database stays bounded however many commits a context serves, and
 * pruning never drops an object a later call needs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { openObjectDb, verifyClosure } from '@slivingdoc/merge';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FailpointRegistry } from '../src/failpoints';
import { get, memoryStore, type Participant, participant, put, stateFile } from './helpers';

/** Mirrors the merge package's thresholds (`consolidate.ts`). */
const PACK_TRIGGER = 8;
const LOOSE_TRIGGER = 16;
/** A persist adds at most 9 packs before the next consolidation check. */
const PACKS_PER_PERSIST = 9;

async function gitdirOf(p: Participant): Promise<string> {
  return join(dirname(await stateFile(p.privateRoot)), 'git');
}

function countFiles(gitdir: string): { packs: number; loose: number } {
  const packs = readdirSync(join(gitdir, 'objects', 'pack')).filter((n) => n.endsWith('.idx'));
  let loose = 0;
  for (const name of readdirSync(join(gitdir, 'objects')))
    if (/^[0-9a-f]{2}$/.test(name)) loose += readdirSync(join(gitdir, 'objects', name)).length;
  return { packs: packs.length, loose };
}

/**
 * The recorded baseline's whole closure is readable by a fresh database on P. A baseline of
 * the empty notebook (a run whose steps never published) names no head and has no closure.
 */
async function expectBaselineReadable(p: Participant): Promise<void> {
  const state = JSON.parse(readFileSync(await stateFile(p.privateRoot), 'utf8'));
  if (state.baselineHead === '') {
    expect(state.remoteGeneration).toBe(0);
    return;
  }
  const db = await openObjectDb({ gitdir: await gitdirOf(p) });
  await verifyClosure(db, state.baselineHead);
}

describe('bounded private state', () => {
  it('after 2,000 commits through one context, P holds few packs and the baseline is whole', async () => {
    const store = memoryStore();
    const alice = await participant(store);
    const bob = await participant(store);
    await alice.service.pull({});
    await bob.service.pull({});
    const gitdir = await gitdirOf(alice);
    const expected = new Map<string, string>();
    let worst = { packs: 0, loose: 0 };
    for (let i = 0; i < 2000; i += 1) {
      const file = `f${i % 50}.md`;
      await appendFile(join(alice.dir, file), `alice ${i}\n`);
      expected.set(file, `${expected.get(file) ?? ''}alice ${i}\n`);
      if (i % 10 === 0) {
        // Another writer every 10th round: each such commit imports a foreign increment.
        await put(bob.dir, `b${i % 50}.md`, `bob ${i}\n`);
        expect((await bob.service.commit({ message: `b${i}` })).code).toBe('OK');
      }
      expect((await alice.service.commit({ message: `a${i}` })).code).toBe('OK');
      const now = countFiles(gitdir);
      worst = { packs: Math.max(worst.packs, now.packs), loose: Math.max(worst.loose, now.loose) };
    }
    await alice.service.close();
    // Between two checks P gains at most one persist's packs and a call's loose objects.
    expect(worst.packs).toBeLessThan(PACK_TRIGGER + PACKS_PER_PERSIST);
    expect(worst.loose).toBeLessThan(LOOSE_TRIGGER + 4);
    const final = countFiles(gitdir);
    expect(final.packs).toBeLessThan(PACK_TRIGGER + PACKS_PER_PERSIST);
    await expectBaselineReadable(alice);
    for (const [file, text] of expected) expect(await get(alice.dir, file)).toBe(text);
  }, 600_000);

  it('logs one info record per consolidation, without paths or object ids', async () => {
    const infos: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      debug() {},
      warn() {},
      error() {},
      info: (obj: Record<string, unknown>, msg: string) => infos.push({ obj, msg }),
    };
    const alice = await participant(memoryStore(), { logger, consolidateAlways: true });
    await alice.service.pull({});
    for (let i = 0; i < 3; i += 1) {
      await put(alice.dir, 'a.md', `v${i}\n`);
      await alice.service.commit({ message: `c${i}` });
    }
    await alice.service.close();
    const records = infos.filter((r) => r.msg === 'private state consolidated');
    expect(records.length).toBeGreaterThanOrEqual(3);
    for (const { obj } of records) {
      expect(obj.consolidation).toMatchObject({
        took: { packs: expect.any(Number), objects: expect.any(Number), bytes: expect.any(Number) },
        freed: { objects: expect.any(Number), bytes: expect.any(Number) },
        durationMs: expect.any(Number),
      });
      const text = JSON.stringify(obj);
      expect(text).not.toMatch(/[0-9a-f]{40}/);
      expect(text).not.toContain(alice.privateRoot);
    }
  });

  it('a P that cannot be consolidated keeps serving calls and warns with the code only', async () => {
    const warnings: { obj: object; msg: string }[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (obj: object, msg: string) => warnings.push({ obj, msg }),
    };
    const store = memoryStore();
    const alice = await participant(store, { logger, consolidateAlways: true });
    await alice.service.pull({});
    // The consolidation mark cannot be replaced (a directory stands in its place): every
    // consolidation fails after writing its pack, before removing anything.
    await mkdir(join(await gitdirOf(alice), 'consolidated', 'blocker'), { recursive: true });
    const expected: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      await appendFile(join(alice.dir, 'a.md'), `line ${i}\n`);
      expected.push(`line ${i}\n`);
      expect((await alice.service.commit({ message: `c${i}` })).code).toBe('OK');
    }
    await alice.service.close();
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toEqual({
      obj: { code: 'EISDIR' },
      msg: 'private state consolidation failed; a later call tries again',
    });
    await expectBaselineReadable(alice);
    expect(await get(alice.dir, 'a.md')).toBe(expected.join(''));
  });

  it('pruning never drops an object a later call needs (random commits, pulls and repairs)', async () => {
    type Step =
      | { kind: 'commit'; who: 0 | 1; file: number }
      | { kind: 'edit'; who: 0 | 1; file: number }
      | { kind: 'pull'; who: 0 | 1 }
      | { kind: 'failed-commit'; who: 0 | 1; file: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant('commit' as const),
        who: fc.constantFrom(0, 1),
        file: fc.nat(5),
      }),
      fc.record({
        kind: fc.constant('edit' as const),
        who: fc.constantFrom(0, 1),
        file: fc.nat(5),
      }),
      fc.record({ kind: fc.constant('pull' as const), who: fc.constantFrom(0, 1) }),
      fc.record({
        kind: fc.constant('failed-commit' as const),
        who: fc.constantFrom(0, 1),
        file: fc.nat(5),
      }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 24 }), async (steps) => {
        run += 1;
        const store = memoryStore();
        const failpoints = [new FailpointRegistry(), new FailpointRegistry()];
        // Every call is followed by a full consolidation: the prune runs as often as it can.
        const people = [
          await participant(store, { consolidateAlways: true, failpoints: failpoints[0] }),
          await participant(store, { consolidateAlways: true, failpoints: failpoints[1] }),
        ];
        for (const p of people) await p.service.pull({});
        /** Lines each writer was told OK about. */
        const acknowledged: string[] = [];
        let n = 0;
        for (const s of steps) {
          const p = people[s.who] as Participant;
          n += 1;
          const line = `w${s.who} r${run} s${n}\n`;
          if (s.kind === 'pull') {
            expect((await p.service.pull({})).code).toBe('OK');
            continue;
          }
          await appendFile(join(p.dir, `f${s.file}.md`), line);
          if (s.kind === 'edit') continue;
          if (s.kind === 'failed-commit') {
            // Fails while rewriting L: the repair runs, then the next call on a pruned P.
            (failpoints[s.who] as FailpointRegistry).set('mid-materialize', 'throw', 1);
          }
          const result = await p.service.commit({ message: `s${n}` }).catch((e: unknown) => e);
          const code = (result as { code?: string }).code;
          expect(['OK', 'RECOVERY_FAILURE']).toContain(code);
          if (code === 'OK') acknowledged.push(line);
        }
        for (const p of people) expect((await p.service.pull({})).code).toBe('OK');
        for (const p of people) {
          await p.service.close();
          await expectBaselineReadable(p);
        }
        const text = (
          await Promise.all(
            Array.from({ length: 6 }, (_, i) => get(people[0]!.dir, `f${i}.md`).catch(() => '')),
          )
        ).join('');
        for (const line of acknowledged) expect(text).toContain(line);
      }),
      { numRuns: 12 },
    );
  }, 600_000);
});
