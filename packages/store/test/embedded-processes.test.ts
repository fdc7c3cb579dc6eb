import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleFixture } from '@slivingdoc/testkit/bundle-fixture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedStore } from '../src';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
let dir: string;
let racer: string;
let writer: string;
const children = new Set<ChildProcessWithoutNullStreams>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slivingdoc-embedded-procs-'));
  [racer, writer] = await Promise.all([
    bundleFixture(join(import.meta.dirname, 'fixtures/cas-racer.ts')),
    bundleFixture(join(import.meta.dirname, 'fixtures/cas-writer.ts')),
  ]);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** Starts `node <script> args…` and resolves once it printed its `ready` line. */
async function startChild(script: string, args: string[]) {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.value !== 'ready') throw new Error(`child did not start: ${stderr}`);
  return { child, lines, stderr: () => stderr };
}

// Spawning 108 real node processes is slow on a loaded 2-core machine; no timing is asserted.
describe('embedded store across real processes', { timeout: 300_000 }, () => {
  it('8 processes racing replace-if-match for 200 rounds: one winner per round, its bytes stored', async () => {
    const prefix = 'race';
    const store = await createEmbeddedStore({ dir, prefix });
    await store.createIfAbsent('current', text('init'));
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => startChild(racer, [dir, prefix, `p${i}`])),
    );
    for (let round = 0; round < 200; round++) {
      const { etag } = (await store.get('current'))!;
      for (const r of racers) r.child.stdin.write(`${JSON.stringify({ round, etag })}\n`);
      const answers = await Promise.all(
        racers.map(
          async (r) => JSON.parse((await r.lines.next()).value) as { won: boolean; kind?: string },
        ),
      );
      const winners = answers.flatMap((a, i) => (a.won ? [i] : []));
      expect(winners, `round ${round}`).toHaveLength(1);
      expect(answers.filter((a) => !a.won).every((a) => a.kind === 'precondition-failed')).toBe(
        true,
      );
      const stored = new TextDecoder().decode((await store.get('current'))!.body);
      expect(stored).toBe(`p${winners[0]}:${round}`);
    }
    for (const r of racers) r.child.stdin.end();
    // Lazy pruning keeps the version directory small.
    expect((await readdir(join(dir, prefix, 'current'))).length).toBeLessThanOrEqual(10);
  });

  it('writers SIGKILLed at random points during 100 attempts never leave a torn or unreadable current', async () => {
    const prefix = 'kill';
    const store = await createEmbeddedStore({ dir, prefix });
    await store.createIfAbsent(
      'current',
      text(JSON.stringify({ payload: '', sha256: createHash('sha256').update('').digest('hex') })),
    );
    const verifyCurrent = async () => {
      const read = await store.get('current');
      expect(read).toBeDefined();
      const { payload, sha256 } = JSON.parse(new TextDecoder().decode(read!.body));
      expect(createHash('sha256').update(payload).digest('hex')).toBe(sha256);
      return read!.etag;
    };
    // Two contending writers per round, both killed at a random instant (each mid-attempt),
    // until the writers have made at least 100 write attempts in all.
    let attempts = 0;
    let kills = 0;
    while (attempts < 100) {
      const writers = await Promise.all([0, 1].map(() => startChild(writer, [dir, prefix])));
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 150));
      await Promise.all(
        writers.map(async (w) => {
          const exited = new Promise((resolve) => w.child.once('exit', resolve));
          w.child.kill('SIGKILL');
          await exited;
          kills += 1;
          expect(w.stderr()).toBe('');
          for (let line = await w.lines.next(); !line.done; line = await w.lines.next()) {
            if (line.value === 'attempt') attempts += 1;
          }
        }),
      );
      await verifyCurrent();
    }
    expect(kills).toBeGreaterThanOrEqual(2);
    // No lock was left behind: a fresh store replaces current at once.
    const etag = await verifyCurrent();
    const fresh = await createEmbeddedStore({ dir, prefix });
    await fresh.replaceIfMatch(
      'current',
      text(
        JSON.stringify({ payload: 'x', sha256: createHash('sha256').update('x').digest('hex') }),
      ),
      etag,
    );
    await verifyCurrent();
  });
});
