// The long-run scenario on tiny sizes: two real `slivingdoc serve` processes (the built
// bin) on an embedded store; the figures per window, the targets and the table.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configFor } from '../bench/config';
import type { BenchReport, LongRunResult } from '../bench/report';
import { runLongRun } from '../bench/scenarios/long-run';
import { embeddedTarget } from '../bench/stores';
import { renderReport } from '../bench/table';
import { evaluateTargets } from '../bench/targets';
import { createMcpPool } from '../bench/writers/mcp';
import type { WriterPool } from '../bench/writers/types';
import { repoRoot } from '../vitest-shared.ts';

const cli = join(repoRoot, 'apps/slivingdoc/dist/cli.js');
const roots: string[] = [];
const pools: WriterPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('bench long run', { timeout: 180_000 }, () => {
  it('commits in a row through a real server and reports each window', async () => {
    expect(existsSync(cli), `${cli} missing: run pnpm build first`).toBe(true);
    const root = mkdtempSync(join(tmpdir(), 'bench-long-run-'));
    roots.push(root);
    const target = embeddedTarget(join(root, 'store'));
    const start = async (name: string, count: number, pullFirst: boolean) => {
      const pool = await createMcpPool({
        cli,
        target,
        prefix: 'long',
        root: join(root, name),
        count,
        retries: 8,
        pullFirst,
        // A short checkpoint cycle, so the run crosses several checkpoints.
        extraArgs: ['--checkpoint-packs', '8'],
      });
      pools.push(pool);
      return pool;
    };
    const pool = await start('writers', 2, true);
    let fresh = 0;
    const result = await runLongRun({
      store: 'embedded',
      commits: 25,
      window: 10,
      checkpointPacks: 8,
      pool,
      privateRoot: join(root, 'writers', 'w0', 'private'),
      freshWriter: async () => (await start(`fresh-${fresh++}`, 1, false)).writers[0]!,
    });
    expect(result.windows.map((w) => [w.from, w.to])).toEqual([
      [1, 10],
      [11, 20],
      [21, 25],
    ]);
    for (const w of result.windows) {
      expect(w.p50).toBeGreaterThan(0);
      expect(w.p99).toBeGreaterThanOrEqual(w.p50);
      expect(w.rssBytes).toBeGreaterThan(0);
      expect(w.cpuMsPerCommit).toBeGreaterThan(0);
      expect(w.privateFiles).toBeGreaterThan(0);
    }
    expect(result.freshPull.atEndMs).toBeGreaterThan(0);
    const report = {
      version: 1,
      mode: 'quick',
      complete: true,
      startedAt: '',
      finishedAt: '',
      machine: { cpus: 2, cpuModel: 'x', memoryGiB: 1, node: 'v', git: 'g' },
      load: [],
      pull: [],
      scale: [],
      rawCas: [],
      longRun: [result],
      targets: [],
      errors: [],
    } satisfies BenchReport;
    const targets = Object.fromEntries(evaluateTargets(report).map((t) => [t.id, t]));
    expect(targets['long-run-files-embedded']?.value).toBe(result.windows.at(-1)?.privateFiles);
    expect(targets['long-run-p50-s3']?.met).toBeUndefined();
    expect(renderReport({ ...report, targets: Object.values(targets) })).toContain(
      'long run · embedded · --checkpoint-packs 8',
    );
  });

  it('judges the last window against the first', () => {
    const window = (p50: number, rss: number, files: number) => ({
      from: 1,
      to: 2,
      p50,
      p99: p50,
      rssBytes: rss,
      privateFiles: files,
      privateBytes: 1,
    });
    const run: LongRunResult = {
      scenario: 'long-run',
      store: 'embedded',
      commits: 2,
      window: 1,
      checkpointPacks: null,
      windows: [window(20, 100, 10), window(25, 110, 60)],
      freshPull: { afterFirstWindowMs: 1, atEndMs: 1 },
    };
    const targets = Object.fromEntries(
      evaluateTargets({ load: [], pull: [], scale: [], rawCas: [], longRun: [run] }).map((t) => [
        t.id,
        t,
      ]),
    );
    expect(targets['long-run-p50-embedded']).toMatchObject({ value: 1.25, met: false });
    expect(targets['long-run-rss-embedded']).toMatchObject({ value: 1.1, met: true });
    expect(targets['long-run-files-embedded']).toMatchObject({ value: 60, met: false });
  });

  it('BENCH_LONG_RUN_COMMITS sets the length on both stores', () => {
    expect(configFor([], { BENCH_LONG_RUN_COMMITS: '50000' }).longRun).toMatchObject({
      embedded: 50_000,
      s3: 50_000,
    });
    expect(configFor([], {}).longRun).toMatchObject({ embedded: 10_000, s3: 3_000, window: 500 });
    expect(() => configFor([], { BENCH_LONG_RUN_COMMITS: 'many' })).toThrow(/whole number/);
  });

  it("BENCH_LONG_RUN_CHECKPOINT_PACKS sets the servers' cycle; unset keeps the default", () => {
    expect(configFor([], { BENCH_LONG_RUN_CHECKPOINT_PACKS: '128' }).longRun).toMatchObject({
      embedded: 10_000,
      checkpointPacks: 128,
    });
    expect(configFor([], {}).longRun.checkpointPacks).toBeUndefined();
    expect(() => configFor([], { BENCH_LONG_RUN_CHECKPOINT_PACKS: '0' })).toThrow(/whole number/);
  });
});
