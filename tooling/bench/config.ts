import type { HubConfig } from './scenarios/hub';
/** Sizes of one run: the figures in full mode, tiny ones for the harness tests. */
export interface BenchConfig {
  mode: 'full' | 'quick';
  /** slivingdoc's default `--commit-retries`; git gets the same bound. */
  retries: number;
  distributed: { writers: number; offeredPerSecond: number; commitsPerWriter: number };
  burst: { writers: number };
  saturation: { writers: number[]; durationMs: number };
  notebook: { sizes: number[]; scaleReps: number; coldReps: number; warmReps: number };
  rawCas: { writers: number[]; durationMs: number };
  /** Writers per append burst (real server processes, one file). */
  appendBurst: { writers: number[] };
  /** Simulated hosts (one gate scope each) saturating one S3 bucket together. */
  hosts: { hosts: number; writersPerHost: number; durationMs: number };
  /** Commits of one writer alone, with group commit and without, alternated. */
  lone: { commits: number };
  /**
   * The long run: commits of one server in a row, per store, reported per `window`
   * (`BENCH_LONG_RUN_COMMITS` overrides both counts, e.g. 50000). `checkpointPacks`
   * (`BENCH_LONG_RUN_CHECKPOINT_PACKS`) passes `--checkpoint-packs` to its servers, so one
   * workload can be measured beside another cycle length; unset keeps the product default.
   */
  longRun: { embedded: number; s3: number; window: number; checkpointPacks?: number };
  /** One host, many agents: N stdio processes beside N sessions of one hub. */
  hub: HubConfig;
}

export const FULL: BenchConfig = {
  mode: 'full',
  retries: 8,
  // One commit per writer per minute for 100 writers, time-compressed to 50 commits/s.
  distributed: { writers: 100, offeredPerSecond: 50, commitsPerWriter: 2 },
  burst: { writers: 100 },
  saturation: { writers: [1, 4, 16, 64], durationMs: 5000 },
  notebook: { sizes: [100, 1000, 10000], scaleReps: 5, coldReps: 2, warmReps: 5 },
  rawCas: { writers: [1, 16], durationMs: 3000 },
  appendBurst: { writers: [8, 32, 100] },
  hosts: { hosts: 4, writersPerHost: 16, durationMs: 5000 },
  lone: { commits: 60 },
  longRun: { embedded: 10_000, s3: 3_000, window: 500 },
  hub: {
    sessions: 100,
    seedFiles: 50,
    idleMs: 5000,
    saturationWriters: 64,
    saturationMs: 5000,
    newSessions: { stdio: 5, hub: 20 },
  },
};

export const QUICK: BenchConfig = {
  mode: 'quick',
  retries: 8,
  distributed: { writers: 4, offeredPerSecond: 20, commitsPerWriter: 2 },
  burst: { writers: 4 },
  saturation: { writers: [1, 2], durationMs: 600 },
  notebook: { sizes: [10, 40], scaleReps: 2, coldReps: 1, warmReps: 2 },
  rawCas: { writers: [1, 2], durationMs: 300 },
  appendBurst: { writers: [2, 4] },
  hosts: { hosts: 2, writersPerHost: 2, durationMs: 600 },
  lone: { commits: 4 },
  longRun: { embedded: 24, s3: 12, window: 8 },
  hub: {
    sessions: 4,
    seedFiles: 5,
    idleMs: 200,
    saturationWriters: 2,
    saturationMs: 600,
    newSessions: { stdio: 1, hub: 2 },
  },
};

/** Quick mode when `BENCH_QUICK` is set (non-empty, not `0`) or `--quick` is passed. */
export function configFor(argv: string[], env: NodeJS.ProcessEnv): BenchConfig {
  const quick = argv.includes('--quick') || (!!env.BENCH_QUICK && env.BENCH_QUICK !== '0');
  const config = quick ? QUICK : FULL;
  const commits = wholeNumber(env, 'BENCH_LONG_RUN_COMMITS');
  const checkpointPacks = wholeNumber(env, 'BENCH_LONG_RUN_CHECKPOINT_PACKS');
  return {
    ...config,
    longRun: {
      ...config.longRun,
      ...(commits === undefined ? {} : { embedded: commits, s3: commits }),
      ...(checkpointPacks === undefined ? {} : { checkpointPacks }),
    },
  };
}

/** `env[name]` as a whole number ≥ 1; `undefined` when unset or empty; throws otherwise. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name}: a whole number of at least 1`);
  return value;
}

/** The largest writer count any load scenario needs (one pool serves them all). */
export function poolSize(config: BenchConfig): number {
  return Math.max(config.distributed.writers, config.burst.writers, ...config.saturation.writers);
}

/** The scenario groups `BENCH_SCENARIOS` can select (comma-separated; default all). */
export const SCENARIOS = [
  'raw-cas',
  'load',
  'notebook',
  'append-burst',
  'long-run',
  'hub',
] as const;
export type ScenarioGroup = (typeof SCENARIOS)[number];

/** The groups `BENCH_SCENARIOS` names (all when unset or empty); throws on an unknown name. */
export function selectedScenarios(env: NodeJS.ProcessEnv): Set<ScenarioGroup> {
  const raw = env.BENCH_SCENARIOS;
  if (raw === undefined || raw.trim() === '') return new Set(SCENARIOS);
  const names = raw.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!(SCENARIOS as readonly string[]).includes(name)) {
      throw new Error(`BENCH_SCENARIOS: unknown scenario ${name} (${SCENARIOS.join(', ')})`);
    }
  }
  return new Set(names as ScenarioGroup[]);
}
