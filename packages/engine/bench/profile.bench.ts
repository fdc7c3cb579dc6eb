/**
 * Per-phase CPU profile and wall time of the engine on one N-file notebook (embedded store):
 * seeding commit, cold pull, one-file commit, warm pull of one increment, no-op pull, and one
 * commit that lost a race (another writer published in between). Prints wall times and, per
 * phase, the functions with the most inclusive CPU time (our code only), so what dominates a
 * phase can be read without a profiler UI.
 *   BENCH_FILES=2000 node --import tsx --conditions=@slivingdoc/source bench/profile.bench.ts
 *   (BENCH_PROFILE_DIR=dir keeps the .cpuprofile files, BENCH_TOP=n rows per phase)
 */

import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore } from '@slivingdoc/store';
import { participants } from './participants';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const FILES = Number(process.env.BENCH_FILES ?? 2_000);
const TOP = Number(process.env.BENCH_TOP ?? 14);
const keepDir = process.env.BENCH_PROFILE_DIR;
const base = await realpath(await mkdtemp(join(tmpdir(), 'engine-profile-')));
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });

const open = participants(base);

function short(url: string): string {
  const m = /packages\/([^/]+)\/src\/(.+)$/.exec(url);
  if (m) return `${m[1]}/${m[2]}`;
  const dep = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  return dep ? (dep[1] ?? url) : url || '(native)';
}

/** Inclusive CPU ms per function (a function counted once per sample even when recursive). */
function inclusive(profile: Profile): { total: number; rows: [string, number][] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const totals = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const leaf = byId.get(id);
    if (leaf?.callFrame.functionName === '(idle)') return;
    total += ms;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)?.callFrame;
      if (!f?.url.includes('/packages/')) continue;
      const key = `${f.functionName || '(anon)'} ${short(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      totals.set(key, (totals.get(key) ?? 0) + ms);
    }
  });
  return { total, rows: [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP) };
}

/** Self CPU ms per function, every script and native frame included. */
function self(profile: Profile): [string, number][] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const f = byId.get(id)?.callFrame;
    if (!f || f.functionName === '(idle)') return;
    const key = `${f.functionName || '(anon)'} ${short(f.url)}:${f.lineNumber + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
}

const report: string[] = [];
async function phase(name: string, run: () => Promise<unknown>): Promise<void> {
  await session.post('Profiler.start');
  const t = performance.now();
  await run();
  const wall = performance.now() - t;
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  if (keepDir !== undefined) {
    await mkdir(keepDir, { recursive: true });
    await writeFile(join(keepDir, `${name}.cpuprofile`), JSON.stringify(profile));
  }
  const { total, rows } = inclusive(profile);
  report.push(`${name}: wall ${wall.toFixed(0)} ms, cpu ${total.toFixed(0)} ms`);
  report.push('  inclusive (our code):');
  for (const [key, ms] of rows) report.push(`  ${ms.toFixed(0).padStart(7)} ms  ${key}`);
  report.push('  self:');
  for (const [key, ms] of self(profile)) report.push(`  ${ms.toFixed(0).padStart(7)} ms  ${key}`);
}

const store = await createEmbeddedStore({ dir: join(base, 'store'), prefix: 'b' });
const writer = await open(store);
await writer.service.pull({});
for (let i = 0; i < FILES; i += 1) {
  const dir = join(writer.dir, `d${Math.floor(i / 100)}`);
  if (i % 100 === 0) await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `f${i}.md`), `file ${i}\n${'x'.repeat(1000)}\n`);
}
await phase('seed commit', () => writer.service.commit({ message: 'bulk' }));
const reader = await open(store);
await phase('cold pull', () => reader.service.pull({}));
for (let r = 0; r < 3; r += 1) {
  await writeFile(join(writer.dir, 'd0', 'f0.md'), `edit ${r}\n`);
  await phase(`one-file commit ${r}`, () => writer.service.commit({ message: 'one' }));
}
await phase('warm pull', () => reader.service.pull({}));
await phase('no-op pull', () => reader.service.pull({}));
// A lost race: the reader's commit must fetch the writer's increment and re-merge.
await writeFile(join(writer.dir, 'd0', 'f2.md'), 'writer\n');
await writer.service.commit({ message: 'writer' });
await writeFile(join(reader.dir, 'd1', 'f100.md'), 'reader\n');
await phase('commit after remote change', () => reader.service.commit({ message: 'reader' }));

console.log(report.join('\n'));
await writer.service.close();
await reader.service.close();
await rm(base, { recursive: true, force: true });
