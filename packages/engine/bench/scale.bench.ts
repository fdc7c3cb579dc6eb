/**
 * Scale: one-file commit latency on a small and a large notebook (embedded store), commits
 * alternated between the two so both sizes see the same machine load, with where the time went
 * (failpoint hooks as stopwatches). The target: a one-file commit on the large notebook takes ≤ 3× one on the small.
 *   BENCH_FILES=10000 BENCH_ROUNDS=15 node --import tsx --conditions=@slivingdoc/source bench/scale.bench.ts
 *   (BENCH_SMALL=100 sets the small notebook)
 */

import { lstatSync, readdirSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore } from '@slivingdoc/store';
import { FAILPOINT, type FailpointName, type Failpoints } from '../src/index';
import { participants, seedNotebook } from './participants';

const LARGE = Number(process.env.BENCH_FILES ?? 10_000);
const SMALL = Number(process.env.BENCH_SMALL ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const base = await realpath(await mkdtemp(join(tmpdir(), 'engine-scale-')));
const open = participants(base);

/** The phases of one commit, each ending at the failpoint named after it. */
const PHASES = [
  ['enter+scan', FAILPOINT.afterScan],
  ['checks+read current', FAILPOINT.afterReadCurrent],
  ['fetch R', FAILPOINT.afterFetch],
  ['merge+build+upload', FAILPOINT.afterPackUpload],
  ['CAS', FAILPOINT.afterCasAnswered],
  ['diffstat+flag', FAILPOINT.afterRecoveryFlag],
  ['write L', FAILPOINT.afterMaterialize],
  ['record baseline', FAILPOINT.afterBaselineWrite],
] as const;

/** Per commit: ms from the previous hit (or the call's start) to each phase's failpoint. */
class PhaseTimer implements Failpoints {
  readonly samples: Map<string, number>[] = [];
  #last = 0;
  #current = new Map<string, number>();
  start(): void {
    this.#last = performance.now();
    this.#current = new Map();
  }
  finish(): number {
    const now = performance.now();
    this.#current.set('answer', now - this.#last);
    this.samples.push(this.#current);
    return [...this.#current.values()].reduce((a, b) => a + b, 0);
  }
  hit(name: FailpointName): undefined {
    const phase = PHASES.find(([, point]) => point === name);
    if (phase === undefined) return;
    const now = performance.now();
    this.#current.set(phase[0], now - this.#last);
    this.#last = now;
    return undefined;
  }
}

async function notebookOf(files: number) {
  const store = await createEmbeddedStore({ dir: join(base, `store-${files}`), prefix: 'b' });
  const timer = new PhaseTimer();
  const writer = await open(store, { failpoints: timer });
  await seedNotebook(writer, files);
  timer.samples.length = 0;
  return { files, writer, timer, latencies: [] as number[] };
}

/**
 * The least a change-detecting scan of the large notebook does (contract §4/§9): list every
 * directory and lstat every file, nothing else, measured in the same rounds as the commits.
 */
function statFloor(dir: string): number {
  const t = performance.now();
  for (const sub of readdirSync(dir)) {
    const path = join(dir, sub);
    for (const name of readdirSync(path)) lstatSync(join(path, name));
  }
  return performance.now() - t;
}

const notebooks = [await notebookOf(SMALL), await notebookOf(LARGE)];
const largeDir = notebooks[1]?.writer.dir as string;
const floors: number[] = [];
for (let r = 0; r < ROUNDS; r += 1) {
  floors.push(statFloor(largeDir));
  for (const nb of notebooks) {
    await writeFile(join(nb.writer.dir, 'd0', 'f0.md'), `file 0 edit ${r}\n`);
    nb.timer.start();
    const t = performance.now();
    await nb.writer.service.commit({ message: 'one' });
    nb.latencies.push(performance.now() - t);
    nb.timer.finish();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const header = ['files', 'p50 ms', 'min ms', ...PHASES.map(([name]) => name), 'answer'];
const rows = notebooks.map((nb) => [
  String(nb.files),
  median(nb.latencies).toFixed(1),
  Math.min(...nb.latencies).toFixed(1),
  ...[...PHASES.map(([name]) => name), 'answer'].map((name) =>
    median(nb.timer.samples.map((s) => s.get(name) ?? 0)).toFixed(1),
  ),
]);
const [small, large] = notebooks.map((nb) => median(nb.latencies)) as [number, number];
const widths = header.map((_, c) => Math.max(...[header, ...rows].map((r) => (r[c] ?? '').length)));
for (const row of [header, ...rows])
  console.log(row.map((cell, c) => cell.padStart(widths[c] ?? 0)).join('  '));
console.log(`ratio p50 ${LARGE}/${SMALL} files: ${(large / small).toFixed(2)}x (target <= 3x)`);
console.log(
  `floor: readdir + lstat of the ${LARGE} files alone, p50 ${median(floors).toFixed(1)} ms = ${(median(floors) / small).toFixed(2)}x the ${SMALL}-file commit`,
);
for (const nb of notebooks) await nb.writer.service.close();
await rm(base, { recursive: true, force: true });
