/**
 * Engine benchmark on the embedded store: commit latency and throughput for 1/10/100 writers,
 * cold pull of a checkpointed N-file notebook, warm pull of one increment, and commit latency
 * with one changed file on a 100- vs N-file notebook. `pnpm bench` (BENCH_FILES=10000 default;
 * BENCH_WRITERS=1,10,100 and BENCH_ROUNDS, commits per writer, override the commit scenarios).
 */

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, type ObjectStore } from '@slivingdoc/store';
import { FAILPOINT, type FailpointName, type Failpoints } from '../src/index';
import { participants, seedNotebook } from './participants';

const FILES = Number(process.env.BENCH_FILES ?? 10_000);
const WRITERS = (process.env.BENCH_WRITERS ?? '1,10,100').split(',').map(Number);
const base = await realpath(await mkdtemp(join(tmpdir(), 'engine-bench-')));

/**
 * Failpoint hooks used as stopwatches: per attempt, how long fetching R, building and
 * uploading the proposal, and the CAS itself took (the read-current → CAS window).
 */
class AttemptTimer implements Failpoints {
  readonly sums = { fetch: 0, build: 0, cas: 0, attempts: 0 };
  #last = 0;
  hit(name: FailpointName): undefined {
    const now = performance.now();
    if (name === FAILPOINT.afterFetch) this.sums.fetch += now - this.#last;
    else if (name === FAILPOINT.afterPackUpload) this.sums.build += now - this.#last;
    else if (name === FAILPOINT.afterCasAnswered) {
      this.sums.cas += now - this.#last;
      this.sums.attempts += 1;
    } else if (name !== FAILPOINT.afterReadCurrent && name !== FAILPOINT.afterCasSent) return;
    this.#last = now;
    return undefined;
  }
}

const openParticipant = participants(base);
/** A participant with a high retry bound by default (the bench measures contention, not REMOTE_BUSY). */
function open(store: ObjectStore, retries = 100, failpoints?: Failpoints) {
  return openParticipant(store, {
    commitRetries: retries,
    ...(failpoints === undefined ? {} : { failpoints }),
  });
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const rows: string[][] = [['scenario', 'p50 ms', 'p90 ms', 'p99 ms', 'rate']];

for (const writers of WRITERS) {
  const store = await createEmbeddedStore({ dir: join(base, `store-w${writers}`), prefix: 'b' });
  const timers = Array.from({ length: writers }, () => new AttemptTimer());
  const parts = await Promise.all(timers.map((timer) => open(store, 100, timer)));
  for (const p of parts) await p.service.pull({});
  const latencies: number[] = [];
  const rounds = Number(process.env.BENCH_ROUNDS ?? (writers === 1 ? 50 : writers === 10 ? 5 : 1));
  const start = performance.now();
  await Promise.all(
    parts.map(async (p, i) => {
      for (let r = 0; r < rounds; r += 1) {
        await writeFile(join(p.dir, `w${i}-${r}.md`), `${i} ${r}\n`);
        const t = performance.now();
        await p.service.commit({ message: 'bench' });
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const sum = (key: keyof AttemptTimer['sums']) => timers.reduce((a, t) => a + t.sums[key], 0);
  const attempts = sum('attempts');
  const each = (key: 'fetch' | 'build' | 'cas') => (sum(key) / attempts).toFixed(0);
  rows.push([
    `commit, ${writers} writer(s)`,
    ...[50, 90, 99].map((q) => pct(latencies, q).toFixed(0)),
    `${(latencies.length / seconds).toFixed(1)} commits/s, ${(attempts / latencies.length).toFixed(1)} CAS/commit; per attempt ms: fetch ${each('fetch')}, build+upload ${each('build')}, CAS ${each('cas')}`,
  ]);
  for (const p of parts) await p.service.close();
}

async function notebookOf(files: number) {
  const store = await createEmbeddedStore({ dir: join(base, `store-f${files}`), prefix: 'b' });
  const writer = await open(store);
  await seedNotebook(writer, files);
  return { store, writer };
}

async function oneFileCommits(files: number, label: string) {
  const { store, writer } = await notebookOf(files);
  const latencies: number[] = [];
  for (let r = 0; r < 10; r += 1) {
    await writeFile(join(writer.dir, 'd0', 'f0.md'), `file 0 edit ${r}\n`);
    const t = performance.now();
    await writer.service.commit({ message: 'one' });
    latencies.push(performance.now() - t);
  }
  rows.push([label, ...[50, 90, 99].map((q) => pct(latencies, q).toFixed(0)), '']);
  return { store, writer };
}

await oneFileCommits(100, 'commit 1 changed file, 100-file notebook');
const big = await oneFileCommits(FILES, `commit 1 changed file, ${FILES}-file notebook`);
const reader = await open(big.store);
let t = performance.now();
await reader.service.pull({});
rows.push([`cold pull, ${FILES}-file notebook`, (performance.now() - t).toFixed(0), '', '', '']);
await writeFile(join(big.writer.dir, 'd0', 'f1.md'), 'changed\n');
await big.writer.service.commit({ message: 'warm' });
t = performance.now();
await reader.service.pull({});
rows.push(['warm pull, one new increment', (performance.now() - t).toFixed(0), '', '', '']);

const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
for (const row of rows) console.log(row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join('  '));
await rm(base, { recursive: true, force: true });
