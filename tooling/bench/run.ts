// `pnpm bench` (through tooling/bench-all.sh): every scenario on the embedded store
// and, when the SLIVINGDOC_TEST_S3_* pairs are set, on the real S3 server; the git baseline in
// the same invocation; one table on stdout, bench-results/latest.{json,svg}.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ObjectStore } from '@slivingdoc/store';
import { renderChart } from './chart';
import {
  type BenchConfig,
  configFor,
  poolSize,
  type ScenarioGroup,
  selectedScenarios,
} from './config';
import { describeSizes, groupSizes, lastPosition } from './group-sizes';
import { measureRawCas } from './raw-cas';
import type { BenchReport, HubComparison, LoadResult, StoreKind, System } from './report';
import { runAppendBurst } from './scenarios/append';
import { measureSide } from './scenarios/hub';
import { type LoadRun, runBurst, runDistributed, runSaturation } from './scenarios/load';
import { runLone } from './scenarios/lone';
import { runLongRun } from './scenarios/long-run';
import { type NotebookRun, runPull, runScale, seedNotebook } from './scenarios/notebook';
import { embeddedTarget, type StoreTarget, s3SettingsFromEnv, s3Target } from './stores';
import { renderReport } from './table';
import { evaluateTargets } from './targets';
import { createEnginePool } from './writers/engine';
import { createGitPool } from './writers/git';
import { createHubPool, type HubPool } from './writers/hub';
import { createMcpPool } from './writers/mcp';
import type { WriterPool } from './writers/types';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

type Accumulated = Pick<
  BenchReport,
  'load' | 'pull' | 'scale' | 'rawCas' | 'appendBurst' | 'lone' | 'longRun' | 'hub' | 'errors'
>;

function progress(text: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

/** Runs one scenario block; a failure is recorded in the report instead of ending the run. */
async function attempt(
  acc: Accumulated,
  where: { scenario: string; system: System; store: StoreKind },
  block: () => Promise<void>,
): Promise<void> {
  progress(`${where.scenario} · ${where.system} · ${where.store}`);
  try {
    await block();
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]!.slice(0, 300);
    progress(`  failed: ${(error as Error).message.slice(0, 2000)}`);
    acc.errors.push({ ...where, message });
  }
}

/**
 * Runs one load scenario; with the pool's store at hand, records how many commits each
 * increment it published carried (group commit's group sizes).
 */
async function withGroupSizes(
  store: ObjectStore | undefined,
  scenario: () => Promise<LoadResult>,
): Promise<LoadResult> {
  const from = store ? await lastPosition(store) : 0n;
  const result = await scenario();
  if (store) result.metrics.groupSizes = describeSizes(await groupSizes(store, from));
  return result;
}

/** Scenarios 1–3 on one pool; saturation uses the pool's first N writers. */
async function runLoad(
  acc: Accumulated,
  config: BenchConfig,
  system: System,
  store: StoreKind,
  makePool: () => Promise<WriterPool>,
  checkpoint: () => Promise<void>,
  shared?: ObjectStore,
): Promise<void> {
  let pool: WriterPool | undefined;
  await attempt(acc, { scenario: 'load (start writers)', system, store }, async () => {
    pool = await makePool();
  });
  if (!pool) return;
  const run: LoadRun = { system, store, pool, sequence: [] };
  const where = (scenario: string) => ({ scenario, system, store });
  await attempt(acc, where('distributed'), async () => {
    acc.load.push(await withGroupSizes(shared, () => runDistributed(run, config.distributed)));
  });
  await checkpoint();
  await attempt(acc, where('burst'), async () => {
    acc.load.push(await withGroupSizes(shared, () => runBurst(run, config.burst)));
  });
  await checkpoint();
  for (const writers of config.saturation.writers) {
    await attempt(acc, where(`saturation ${writers}`), async () => {
      const subset: WriterPool = { ...run.pool, writers: run.pool.writers.slice(0, writers) };
      acc.load.push(
        await withGroupSizes(shared, () =>
          runSaturation(
            { ...run, pool: subset },
            { writers, durationMs: config.saturation.durationMs },
          ),
        ),
      );
    });
  }
  await pool.close();
}

/** How a pool of server processes is started (see `createMcpPool`). */
interface PoolShape {
  root: string;
  count: number;
  pullFirst: boolean;
  hosts?: number;
  env?: Record<string, string>;
  extraArgs?: string[];
}

/**
 * Group commit on one store: a lone writer with and without group commit, and (on S3) simulated
 * hosts, each a gate scope of its own, saturating one bucket together.
 */
async function runGroupScenarios(
  acc: Accumulated,
  config: BenchConfig,
  target: StoreTarget,
  mcpPool: (name: string, o: PoolShape) => Promise<WriterPool>,
  prefix: (name: string) => string,
  root: string,
  checkpoint: () => Promise<void>,
): Promise<void> {
  const store = target.kind;
  const system: System = 'slivingdoc-mcp';
  await attempt(acc, { scenario: 'lone writer', system, store }, async () => {
    const grouped = await mcpPool('lone-grouped', {
      root: await mkdtemp(join(root, 'lone-g-')),
      count: 1,
      pullFirst: true,
    });
    const ungrouped = await mcpPool('lone-ungrouped', {
      root: await mkdtemp(join(root, 'lone-u-')),
      count: 1,
      pullFirst: true,
      env: { SLIVINGDOC_TEST_GROUP_COMMIT: '0' },
    });
    try {
      const result = await runLone({
        store,
        grouped: grouped.writers[0] as WriterPool['writers'][number],
        ungrouped: ungrouped.writers[0] as WriterPool['writers'][number],
        commits: config.lone.commits,
      });
      acc.lone = [...(acc.lone ?? []), result];
    } finally {
      await grouped.close();
      await ungrouped.close();
    }
  });
  await checkpoint();
  if (store !== 's3') return;
  const { hosts, writersPerHost, durationMs } = config.hosts;
  await attempt(
    acc,
    { scenario: `${hosts} hosts × ${writersPerHost}`, system, store },
    async () => {
      const writers = hosts * writersPerHost;
      const pool = await mcpPool('hosts', {
        root: await mkdtemp(join(root, 'hosts-')),
        count: writers,
        pullFirst: true,
        hosts,
      });
      const shared = await target.open(prefix('hosts'));
      try {
        const result = await withGroupSizes(shared, () =>
          runSaturation({ system, store, pool, sequence: [] }, { writers, durationMs }),
        );
        acc.load.push({ ...result, scenario: 'hosts', metrics: { ...result.metrics, hosts } });
      } finally {
        await pool.close();
        await shared.close?.();
      }
    },
  );
  await checkpoint();
}

/**
 * One host, many agents, on one store: the same agents as stdio processes and as sessions of one hub, each
 * side on a prefix of its own, measured by the same scenario code.
 */
async function runHubComparison(
  acc: Accumulated,
  config: BenchConfig,
  target: StoreTarget,
  cli: string,
  prefix: (name: string) => string,
  root: string,
  nodeArgs: string[],
): Promise<void> {
  const store = target.kind;
  const { hub: shape } = config;
  await attempt(
    acc,
    { scenario: `hub ${shape.sessions}`, system: 'slivingdoc-hub', store },
    async () => {
      // BENCH_HUB_STDIO=0: the hub side only (the stdio fleet of 100 processes is the slow half).
      const stdio =
        process.env.BENCH_HUB_STDIO === '0'
          ? undefined
          : await measureSide({
              system: 'slivingdoc-mcp',
              store,
              config: shape,
              makePool: async () =>
                createMcpPool({
                  cli,
                  target,
                  prefix: prefix('hub-stdio'),
                  retries: config.retries,
                  nodeArgs,
                  root: await mkdtemp(join(root, 'hub-stdio-')),
                  count: shape.sessions,
                  pullFirst: true,
                }),
              // A new stdio agent: its own process, started and connected, then its first pull.
              newSessionMs: async () => {
                const start = performance.now();
                const one = await createMcpPool({
                  cli,
                  target,
                  prefix: prefix('hub-stdio'),
                  retries: config.retries,
                  nodeArgs,
                  root: await mkdtemp(join(root, 'hub-stdio-new-')),
                  count: 1,
                  pullFirst: true,
                });
                const ms = performance.now() - start;
                await one.close();
                return ms;
              },
              newSessions: shape.newSessions.stdio,
            });
      const hub = await measureSide({
        system: 'slivingdoc-hub',
        store,
        config: shape,
        makePool: async () =>
          createHubPool({
            cli,
            target,
            prefix: prefix('hub-sessions'),
            retries: config.retries,
            nodeArgs,
            root: await mkdtemp(join(root, 'hub-')),
            count: shape.sessions,
            pullFirst: true,
          }),
        newSessionMs: (pool) => (pool as HubPool).newSessionMs(),
        newSessions: shape.newSessions.hub,
        reconnectMs: (pool) => (pool as HubPool).reconnectMs(),
      });
      const comparison: HubComparison = { scenario: 'hub', store, stdio, hub };
      acc.hub = [...(acc.hub ?? []), comparison];
    },
  );
}

/**
 * Copies the built app aside (its dependencies linked, not copied): other work in the same
 * checkout may rebuild apps/slivingdoc/dist, and `tsup --clean` would pull the bin from under
 * the server processes this run keeps starting.
 */
async function snapshotCli(workRoot: string): Promise<string> {
  const app = join(repoRoot, 'apps/slivingdoc');
  if (!existsSync(join(app, 'dist/cli.js'))) {
    throw new Error(`${app}/dist/cli.js is missing: run pnpm build first`);
  }
  const copy = join(workRoot, 'cli');
  await cp(join(app, 'dist'), join(copy, 'dist'), { recursive: true });
  await cp(join(app, 'package.json'), join(copy, 'package.json'));
  await symlink(await realpath(join(app, 'node_modules')), join(copy, 'node_modules'));
  return join(copy, 'dist/cli.js');
}

/**
 * The append bursts on one pool of server processes (the largest burst's size),
 * smaller bursts on its first writers, each on a file of its own.
 */
async function runAppendBursts(
  acc: Accumulated,
  config: BenchConfig,
  store: StoreKind,
  makePool: (count: number) => Promise<WriterPool>,
  checkpoint: () => Promise<void>,
): Promise<void> {
  const system: System = 'slivingdoc-mcp';
  let pool: WriterPool | undefined;
  await attempt(acc, { scenario: 'append burst (start writers)', system, store }, async () => {
    pool = await makePool(Math.max(...config.appendBurst.writers));
  });
  if (!pool) return;
  for (const writers of config.appendBurst.writers) {
    await attempt(acc, { scenario: `append burst ${writers}`, system, store }, async () => {
      const result = await runAppendBurst({ system, store, pool: pool as WriterPool }, { writers });
      acc.appendBurst = [...(acc.appendBurst ?? []), result];
    });
    await checkpoint();
  }
  await pool.close();
}

async function runStore(
  acc: Accumulated,
  config: BenchConfig,
  scenarios: Set<ScenarioGroup>,
  target: StoreTarget,
  workRoot: string,
  runId: string,
  cli: string,
  checkpoint: () => Promise<void>,
): Promise<void> {
  const store = target.kind;
  const prefix = (name: string) => `bench-${runId}/${name}`;
  const nodeArgs = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_CPU_PROF)]
    : [];
  const root = await mkdtemp(join(workRoot, `${store}-`));
  const mcpFactory = (name: string) => async (o: PoolShape) =>
    createMcpPool({ cli, target, prefix: prefix(name), retries: config.retries, nodeArgs, ...o });
  const engineFactory = (name: string) => {
    const opened = target.open(prefix(name));
    return async (o: { root: string; count: number; pullFirst: boolean }) =>
      createEnginePool({ store: await opened, retries: config.retries, ...o });
  };

  for (const writers of scenarios.has('raw-cas') ? config.rawCas.writers : []) {
    await attempt(
      acc,
      { scenario: `raw CAS ${writers}`, system: 'slivingdoc-engine', store },
      async () => {
        const raw = await target.open(prefix(`raw-cas-${writers}`));
        acc.rawCas.push(
          await measureRawCas({
            store: raw,
            kind: store,
            writers,
            durationMs: config.rawCas.durationMs,
          }),
        );
      },
    );
  }

  const size = poolSize(config);
  if (scenarios.has('load')) {
    const mcpStore = await target.open(prefix('load-mcp'));
    await runLoad(
      acc,
      config,
      'slivingdoc-mcp',
      store,
      async () =>
        mcpFactory('load-mcp')({
          root: await mkdtemp(join(root, 'load-mcp-')),
          count: size,
          pullFirst: true,
        }),
      checkpoint,
      mcpStore,
    );
    await mcpStore.close?.();
    await runGroupScenarios(
      acc,
      config,
      target,
      (name, o) => mcpFactory(name)(o),
      prefix,
      root,
      checkpoint,
    );
    // BENCH_IN_PROCESS=0 leaves out the in-process writers (the product is the MCP row).
    if (process.env.BENCH_IN_PROCESS !== '0')
      await runLoad(
        acc,
        config,
        'slivingdoc-engine',
        store,
        async () =>
          engineFactory('load-engine')({
            root: await mkdtemp(join(root, 'load-engine-')),
            count: size,
            pullFirst: true,
          }),
        checkpoint,
      );
  }
  if (scenarios.has('hub')) {
    await runHubComparison(acc, config, target, cli, prefix, root, nodeArgs);
    await checkpoint();
  }
  if (scenarios.has('append-burst')) {
    await runAppendBursts(
      acc,
      config,
      store,
      async (count) =>
        mcpFactory('append-burst')({
          root: await mkdtemp(join(root, 'append-')),
          count,
          pullFirst: true,
        }),
      checkpoint,
    );
  }

  if (scenarios.has('long-run')) {
    await attempt(acc, { scenario: 'long run', system: 'slivingdoc-mcp', store }, async () => {
      const longRoot = await mkdtemp(join(root, 'long-run-'));
      const packs = config.longRun.checkpointPacks;
      const extraArgs = packs === undefined ? [] : ['--checkpoint-packs', String(packs)];
      const pool = await mcpFactory('long-run')({
        root: longRoot,
        count: 2,
        pullFirst: true,
        extraArgs,
      });
      try {
        const result = await runLongRun({
          store,
          commits: store === 's3' ? config.longRun.s3 : config.longRun.embedded,
          window: config.longRun.window,
          checkpointPacks: packs ?? null,
          pool,
          privateRoot: join(longRoot, 'w0', 'private'),
          freshWriter: async () => {
            const fresh = await mcpFactory('long-run')({
              root: await mkdtemp(join(root, 'long-run-fresh-')),
              count: 1,
              pullFirst: false,
              extraArgs,
            });
            return fresh.writers[0] as WriterPool['writers'][number];
          },
          onWindow: (w) =>
            progress(
              `  commits ${w.from}-${w.to}: p50 ${w.p50.toFixed(1)} ms, p99 ${w.p99.toFixed(1)} ms, RSS ${w.rssBytes === null ? '?' : (w.rssBytes / 2 ** 20).toFixed(0)} MiB, CPU ${w.cpuMsPerCommit == null ? '?' : w.cpuMsPerCommit.toFixed(1)} ms/commit, P ${w.privateFiles} files ${(w.privateBytes / 1024).toFixed(0)} KiB`,
            ),
        });
        acc.longRun = [...(acc.longRun ?? []), result];
      } finally {
        await pool.close();
      }
    });
    await checkpoint();
  }

  const sizes = scenarios.has('notebook') ? config.notebook.sizes : [];
  for (const files of sizes) {
    const name = `notebook-${files}`;
    let seeded = false;
    await attempt(
      acc,
      { scenario: `seed ${files} files`, system: 'slivingdoc-engine', store },
      async () => {
        const ms = await seedNotebook(await target.open(prefix(name)), root, files);
        progress(`  seeded ${files} files in ${Math.round(ms)} ms`);
        seeded = true;
      },
    );
    if (!seeded) continue;
    const systems: [System, NotebookRun['makePool'], number][] = [
      ['slivingdoc-mcp', mcpFactory(name), 0],
      ['slivingdoc-engine', engineFactory(name), 1],
    ];
    for (const [system, makePool, fileIndex] of systems) {
      const nb: NotebookRun = { system, store, makePool, root };
      await attempt(acc, { scenario: `scale ${files}`, system, store }, async () => {
        acc.scale.push(await runScale(nb, { files, reps: config.notebook.scaleReps, fileIndex }));
      });
      if (files === sizes[sizes.length - 1]) {
        await attempt(acc, { scenario: `pull ${files}`, system, store }, async () => {
          acc.pull.push(
            await runPull(nb, {
              files,
              coldReps: config.notebook.coldReps,
              warmReps: config.notebook.warmReps,
              fileIndex: fileIndex + 2,
            }),
          );
        });
      }
    }
    await checkpoint();
  }
}

function machine(): BenchReport['machine'] {
  let git = 'git not found';
  try {
    git = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
  } catch {}
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    git,
  };
}

/** Writes the report as it stands: after every block, so an interrupted run still leaves figures. */
async function writeReport(
  outDir: string,
  config: BenchConfig,
  startedAt: string,
  acc: Accumulated,
  complete: boolean,
): Promise<BenchReport> {
  const report: BenchReport = {
    version: 1,
    mode: config.mode,
    complete,
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machine(),
    ...acc,
    targets: evaluateTargets(acc),
  };
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(outDir, 'latest.svg'), renderChart(report));
  return report;
}

async function main(): Promise<void> {
  const config = configFor(process.argv.slice(2), process.env);
  const outDir = resolve(process.env.BENCH_OUT ?? join(repoRoot, 'bench-results'));
  const startedAt = new Date().toISOString();
  const workRoot = await mkdtemp(join(tmpdir(), 'slivingdoc-bench-'));
  const runId = Date.now().toString(36);
  const acc: Accumulated = {
    load: [],
    pull: [],
    scale: [],
    rawCas: [],
    appendBurst: [],
    lone: [],
    longRun: [],
    hub: [],
    errors: [],
  };
  // BENCH_SCENARIOS=raw-cas,load,notebook,append-burst (default all) runs a subset.
  const scenarios = selectedScenarios(process.env);
  const checkpoint = () => writeReport(outDir, config, startedAt, acc, false).then(() => undefined);
  const cli = await snapshotCli(workRoot);

  const s3 = s3SettingsFromEnv(process.env);
  if (!s3) progress('SLIVINGDOC_TEST_S3_* unset: the S3 server scenarios are not run');

  // Embedded store, then the git baseline, then the S3 server: if a run is cut short, what is
  // missing is the S3 half, never the side-by-side comparison.
  // BENCH_PARTS=embedded,git,s3 (default all) runs a subset, e.g. to repeat one part.
  const parts = new Set((process.env.BENCH_PARTS ?? 'embedded,git,s3').split(','));
  try {
    if (parts.has('embedded')) {
      const embedded = embeddedTarget(join(workRoot, 'store'));
      await runStore(acc, config, scenarios, embedded, workRoot, runId, cli, checkpoint);
    }
    if (parts.has('git') && scenarios.has('load')) {
      await runLoad(
        acc,
        config,
        'git',
        'local-disk',
        async () =>
          createGitPool({
            root: await mkdtemp(join(workRoot, 'git-')),
            count: poolSize(config),
            retries: config.retries,
          }),
        checkpoint,
      );
    }
    if (s3 && parts.has('s3')) {
      await runStore(acc, config, scenarios, s3Target(s3), workRoot, runId, cli, checkpoint);
    }
  } finally {
    if (!process.env.BENCH_KEEP) await rm(workRoot, { recursive: true, force: true });
  }

  const report = await writeReport(outDir, config, startedAt, acc, true);
  process.stdout.write(renderReport(report));
  process.stdout.write(`\nwrote ${join(outDir, 'latest.json')} and latest.svg\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
