import type { LatencySummary } from './stats';

/** Who did the work: slivingdoc over MCP stdio, slivingdoc in-process, or the git baseline. */
export type System = 'slivingdoc-mcp' | 'slivingdoc-hub' | 'slivingdoc-engine' | 'git';
/** Where the shared state lived. git's bare repository is always on local disk. */
export type StoreKind = 'embedded' | 's3' | 'local-disk';
/** `hosts`: saturation by writers in separate gate scopes, as on separate machines. */
export type LoadScenario = 'distributed' | 'burst' | 'saturation' | 'hosts';

/** What one load run (scenarios 1–3 and their git baseline) measured. */
export interface LoadMetrics {
  writers: number;
  /** Offered commits per second (distributed only; closed loops offer as much as they can). */
  offeredPerSecond?: number;
  attempted: number;
  accepted: number;
  remoteBusy: number;
  /** Any other outcome, by `CODE·REASON` (or git's exit description). */
  failed: number;
  failures: Record<string, number>;
  commitsPerSecond: number;
  /** Compare-and-swap attempts (git: push attempts) per accepted commit, when countable. */
  casAttemptsPerCommit?: number;
  /** CPU (user + system) of all server processes per accepted commit, ms, when measurable. */
  cpuMsPerCommit?: number;
  /**
   * Commits per published increment during the scenario, `size×count` smallest first (group
   * commit); absent for git.
   */
  groupSizes?: string;
  /** Simulated hosts (`hosts` scenario only). */
  hosts?: number;
  latency?: LatencySummary;
  durationMs: number;
}

export interface LoadResult {
  scenario: LoadScenario;
  system: System;
  store: StoreKind;
  metrics: LoadMetrics;
}

/**
 * The append burst: `writers` writers append one line each to one file and commit at
 * once, resolving conflicts by keeping both sides and committing again.
 */
export interface AppendBurstResult {
  scenario: 'append-burst';
  system: System;
  store: StoreKind;
  writers: number;
  /** Writers whose line was finally accepted. */
  accepted: number;
  /** CONTENT_CONFLICT answers over all commit calls. */
  conflicts: number;
  /** notes_commit calls in all, first attempts and re-commits after a conflict or RETRY. */
  commitCalls: number;
  /** Retryable answers (REMOTE_BUSY, PATH_BUSY, STORAGE_FAILURE) committed again after, by code. */
  retried: Record<string, number>;
  /** Writers that stopped on another answer, by `CODE·REASON`. */
  failures: Record<string, number>;
  /** The accepted file holds every writer's line exactly once and no marker. */
  everyLineOnce: boolean;
  /** From the burst's start to the last writer's final answer. */
  durationMs: number;
  /** Per accepted writer: from the burst's start to its accepted commit. */
  latency?: LatencySummary;
}

/**
 * One writer alone (group commit must add no latency): the same commits with group commit on (the
 * default) and off (the test-only switch), alternated so machine load hits both alike.
 */
export interface LoneResult {
  scenario: 'lone';
  store: StoreKind;
  commits: number;
  grouped: LatencySummary;
  ungrouped: LatencySummary;
}

/** One window of the long run: commits `from`…`to` of the measured server. */
export interface LongRunWindow {
  from: number;
  to: number;
  p50: number;
  p99: number;
  /** The measured server's resident set size at the window's end; null when not measurable. */
  rssBytes: number | null;
  /**
   * The measured server's CPU time (user + system, from `/proc`) over the window divided by its
   * commits, background work (consolidation, checkpoints, foreign imports) included: unlike the
   * latency, hardly moved by other processes on a loaded machine. Null when not measurable;
   * absent in reports from before it was measured.
   */
  cpuMsPerCommit?: number | null;
  /** Files and bytes of its private root (P) at the window's end. */
  privateFiles: number;
  privateBytes: number;
}

/** The long run: one server committing thousands of times in a row, measured per window. */
export interface LongRunResult {
  scenario: 'long-run';
  store: StoreKind;
  commits: number;
  window: number;
  /** The servers' `--checkpoint-packs` (`BENCH_LONG_RUN_CHECKPOINT_PACKS`); `null`: the default. */
  checkpointPacks: number | null;
  windows: LongRunWindow[];
  /** A fresh directory's cold pull (median of 3) after the first window and at the end. */
  freshPull: { afterFirstWindowMs: number; atEndMs: number };
}

/** Scenario 4: cold pull of a large checkpointed notebook, warm pull of one increment, no-op pull. */
export interface PullResult {
  scenario: 'pull';
  system: System;
  store: StoreKind;
  files: number;
  cold: LatencySummary;
  warm: LatencySummary;
  noop: LatencySummary;
}

/** Scenario 5: commit latency of one changed file in a notebook of `files` files. */
export interface ScaleResult {
  scenario: 'scale';
  system: System;
  store: StoreKind;
  files: number;
  latency: LatencySummary;
}

/** The store's own compare-and-swap (read `current`, replace it if unchanged), no engine at all. */
export interface RawCasResult {
  store: StoreKind;
  writers: number;
  casPerSecond: number;
  /** One successful read-then-replace, as seen by one writer. */
  roundTrip: LatencySummary;
  lost: number;
}

/** One target of the issue, measured in this run. */
export interface TargetCheck {
  id: string;
  description: string;
  value: number | undefined;
  threshold: number;
  /** `>=` or `<=` the threshold passes. */
  direction: '>=' | '<=';
  met: boolean | undefined;
}

/** A scenario that could not run at all (its error, so the report says so instead of hiding it). */
export interface ScenarioError {
  scenario: string;
  system: System;
  store: StoreKind;
  message: string;
}

/** Everything one `pnpm bench` run wrote to bench-results/latest.json. */
export interface BenchReport {
  version: 1;
  mode: 'full' | 'quick';
  /** False while the run is still going (or was cut short): the figures so far. */
  complete: boolean;
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; git: string };
  load: LoadResult[];
  pull: PullResult[];
  scale: ScaleResult[];
  rawCas: RawCasResult[];
  /** Absent in reports written before the append burst existed. */
  appendBurst?: AppendBurstResult[];
  /** Absent in reports written before group commit. */
  lone?: LoneResult[];
  /** Absent in reports written before the long run existed. */
  longRun?: LongRunResult[];
  /** N stdio processes beside N sessions of one hub. Absent in older reports. */
  hub?: HubComparison[];
  targets: TargetCheck[];
  errors: ScenarioError[];
}

/** A short label for a system on a store, used by the table and the chart. */
export function label(system: System, store: StoreKind): string {
  return system === 'git' ? 'git (bare repo)' : `${system.replace('slivingdoc-', '')} · ${store}`;
}

/** What one side (the stdio fleet or the hub) measured. */
export interface HubSide {
  system: System;
  sessions: number;
  /** Summed over the side's server processes after one pull each and `idleMs` idle, MiB. */
  idle: { rssMiB: number; pssMiB: number; processes: number };
  burst: LoadResult;
  append: AppendBurstResult;
  /** Commits per second of a closed loop of 1 writer and of `writers` writers. */
  saturation: { writers: number; one: number; many: number };
  /** Connect (initialize) → first notes_pull answered, ms. */
  newSession: LatencySummary;
  /** The same for an agent reconnecting with its token (its directory already pulled); hub only. */
  reconnect?: LatencySummary;
}

export interface HubComparison {
  scenario: 'hub';
  store: StoreKind;
  /** Absent when `BENCH_HUB_STDIO=0` left the stdio fleet out. */
  stdio: HubSide | undefined;
  hub: HubSide;
}
