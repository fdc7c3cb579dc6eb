// The floor under a group member's L rewrite (contract §9: OK only once L holds the accepted tree):
// the CPU one process spends writing N new files into a directory with the workspace's own
// `writeChanges` (temp file, write, fsync, link, directory fsync), median of BENCH_RUNS runs.
// A member of a group of N writes the other N − 1 members' files, so N members on C cores need
// at least N × (N − 1) × (CPU per file) / C of wall time for their L writes alone.
//   tooling/node_modules/.bin/tsx tooling/bench/l-writes.ts [files=99] [cores=2]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuUsage } from 'node:process';
import { writeChanges } from '@slivingdoc/workspace';
import { median } from './stats';

const files = Number(process.argv[2] ?? 99);
const cores = Number(process.argv[3] ?? 2);
const runs = Number(process.env.BENCH_RUNS ?? 15);

async function oneRun(root: string, run: number): Promise<{ cpuMs: number; wallMs: number }> {
  const dir = join(root, `run-${run}`);
  await writeChanges(root, [
    { path: `run-${run}/.keep`, content: new Uint8Array(), expect: 'absent' },
  ]);
  const changes = Array.from({ length: files }, (_, i) => ({
    path: `run-${run}/writer-${i}.md`,
    content: Buffer.from(`- a line from writer ${i}, as a group member's note holds it\n`),
    expect: 'absent' as const,
  }));
  const before = cpuUsage();
  const start = performance.now();
  await writeChanges(root, changes);
  const wallMs = performance.now() - start;
  const used = cpuUsage(before);
  await rm(dir, { recursive: true });
  return { cpuMs: (used.user + used.system) / 1000, wallMs };
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-l-writes-'));
  try {
    await oneRun(root, -1); // warm-up: module code compiled, directory cache hot
    const results = [];
    for (let run = 0; run < runs; run++) results.push(await oneRun(root, run));
    const cpu = median(results.map((r) => r.cpuMs));
    const wall = median(results.map((r) => r.wallMs));
    const perFile = cpu / files;
    const members = files + 1;
    console.log(`${files} new files per writeChanges, median of ${runs} runs, one process:`);
    console.log(
      `  CPU ${cpu.toFixed(1)} ms (${(perFile * 1000).toFixed(0)} µs per file), wall ${wall.toFixed(1)} ms`,
    );
    console.log(
      `  a group of ${members} members on ${cores} cores: >= ${((members * files * perFile) / cores / 1000).toFixed(2)} s of wall time for L writes alone`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
