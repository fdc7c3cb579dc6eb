// Side-by-side contention figures for two or more builds of the app: the raw compare-and-swap
// ceiling, MCP saturation at N writers and the burst, on the embedded store, with the builds
// alternated (and their order reversed) round by round so machine load hits them alike. Usage:
//   tooling/node_modules/.bin/tsx tooling/bench/contention.ts \
//     before=/tmp/before/dist/cli.js after=apps/slivingdoc/dist/cli.js
// Environment: BENCH_ROUNDS (2), BENCH_SATURATION (1,4,16), BENCH_BURST (100; 0 = none),
// BENCH_DURATION_MS (5000), BENCH_CPU_PROF=<dir> (--cpu-prof in every server process),
// BENCH_STORE=s3 (the S3 server named by the SLIVINGDOC_TEST_S3_* pairs that
// tooling/rgw/start-rgw.sh prints, instead of the embedded store), BENCH_HOSTS=<hosts>x<writers>
// (e.g. 4x16: simulated hosts, each a gate scope of its own, saturating together; 0 = none).
// Every scenario also prints its group-size distribution (commits per increment, `size×count`).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describeSizes, groupSizes, lastPosition } from './group-sizes';
import { measureRawCas } from './raw-cas';
import type { LoadMetrics } from './report';
import { type LoadRun, runBurst, runSaturation } from './scenarios/load';
import { embeddedTarget, type StoreTarget, s3SettingsFromEnv, s3Target } from './stores';
import { createMcpPool } from './writers/mcp';

const RETRIES = 8;

function numbers(text: string | undefined, fallback: number[]): number[] {
  return text ? text.split(',').map(Number) : fallback;
}

function chooseTarget(work: string): StoreTarget {
  if (process.env.BENCH_STORE !== 's3') return embeddedTarget(join(work, 'store'));
  const s3 = s3SettingsFromEnv(process.env);
  if (s3 === undefined) throw new Error('BENCH_STORE=s3 needs the SLIVINGDOC_TEST_S3_* pairs');
  return s3Target(s3);
}

function row(label: string, scenario: string, m: LoadMetrics): string {
  const cas = m.casAttemptsPerCommit === undefined ? '–' : m.casAttemptsPerCommit.toFixed(2);
  const p50 = m.latency ? Math.round(m.latency.p50) : '–';
  const p99 = m.latency ? Math.round(m.latency.p99) : '–';
  const cpu = m.cpuMsPerCommit === undefined ? '–' : Math.round(m.cpuMsPerCommit);
  return [
    label.padEnd(10),
    scenario.padEnd(14),
    `${m.accepted}/${m.attempted}`.padStart(9),
    String(m.remoteBusy).padStart(5),
    String(m.failed).padStart(6),
    m.commitsPerSecond.toFixed(1).padStart(9),
    cas.padStart(9),
    String(p50).padStart(8),
    String(p99).padStart(8),
    String(cpu).padStart(8),
  ].join('  ');
}

async function main(): Promise<void> {
  const builds = process.argv.slice(2).map((arg) => {
    const at = arg.indexOf('=');
    if (at < 1) throw new Error(`expected label=path/to/cli.js, got ${arg}`);
    return { label: arg.slice(0, at), cli: resolve(arg.slice(at + 1)) };
  });
  if (builds.length === 0) throw new Error('name at least one build: label=path/to/cli.js');
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const saturation = numbers(process.env.BENCH_SATURATION, [1, 4, 16]);
  const burst = Number(process.env.BENCH_BURST ?? 100);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 5000);
  const [hosts, perHost] = (process.env.BENCH_HOSTS ?? '0x0').split('x').map(Number) as [
    number,
    number,
  ];
  const nodeArgs = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', resolve(process.env.BENCH_CPU_PROF)]
    : [];
  const work = await mkdtemp(join(tmpdir(), 'slivingdoc-contention-'));
  const target = chooseTarget(work);
  const lines = [
    'build       scenario         accepted   busy  failed  commits/s  CAS/commit    p50 ms    p99 ms  CPU ms/commit',
  ];
  const say = (line: string) => {
    lines.push(line);
    process.stderr.write(`${line}\n`);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      const raw = await measureRawCas({
        store: await target.open(`raw-${round}-${work.slice(-6)}`),
        kind: target.kind,
        writers: 16,
        durationMs: 3000,
      });
      say(
        `round ${round + 1}: raw CAS (${target.kind}), 16 loops: ${raw.casPerSecond.toFixed(1)} CAS/s`,
      );
      // Reversed every other round: a build that runs right behind another meets the disk still
      // writing back what the other left, so no build should always come second.
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) {
        // The run's own temp-dir suffix keeps reruns on one S3 bucket apart.
        const prefix = `${build.label}-${round}-${work.slice(-6)}`;
        const size = Math.max(burst, ...saturation);
        const pool = await createMcpPool({
          cli: build.cli,
          target,
          prefix,
          root: await mkdtemp(join(work, `${prefix}-`)),
          count: size,
          retries: RETRIES,
          pullFirst: true,
          nodeArgs,
        });
        const run: LoadRun = { system: 'slivingdoc-mcp', store: target.kind, pool, sequence: [] };
        const store = await target.open(prefix);
        /** Runs one scenario and prints its row and its group sizes. */
        const scenario = async (name: string, body: () => Promise<LoadMetrics>) => {
          const from = await lastPosition(store);
          say(row(build.label, name, await body()));
          say(`${' '.repeat(12)}groups: ${describeSizes(await groupSizes(store, from))}`);
        };
        try {
          for (const writers of saturation) {
            const subset = { ...pool, writers: pool.writers.slice(0, writers) };
            await scenario(`saturation ${writers}`, async () => {
              const result = await runSaturation({ ...run, pool: subset }, { writers, durationMs });
              return result.metrics;
            });
          }
          if (burst > 0) {
            await scenario(
              `burst ${burst}`,
              async () => (await runBurst(run, { writers: burst })).metrics,
            );
          }
        } finally {
          await pool.close();
          await store.close?.();
        }
        if (hosts > 0) {
          const hostsPrefix = `${prefix}-hosts`;
          const hostPool = await createMcpPool({
            cli: build.cli,
            target,
            prefix: hostsPrefix,
            root: await mkdtemp(join(work, `${hostsPrefix}-`)),
            count: hosts * perHost,
            retries: RETRIES,
            pullFirst: true,
            nodeArgs,
            hosts,
          });
          const hostStore = await target.open(hostsPrefix);
          try {
            const from = await lastPosition(hostStore);
            const writers = hosts * perHost;
            const result = await runSaturation(
              { system: 'slivingdoc-mcp', store: target.kind, pool: hostPool, sequence: [] },
              { writers, durationMs },
            );
            say(row(build.label, `${hosts} hosts×${perHost}`, result.metrics));
            say(`${' '.repeat(12)}groups: ${describeSizes(await groupSizes(hostStore, from))}`);
          } finally {
            await hostPool.close();
            await hostStore.close?.();
          }
        }
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
