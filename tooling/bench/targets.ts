import type { BenchReport, StoreKind, System, TargetCheck } from './report';

type Measured = Pick<
  BenchReport,
  'load' | 'pull' | 'scale' | 'rawCas' | 'appendBurst' | 'lone' | 'longRun'
>;

/** The system whose figures the targets are about: real processes over MCP stdio. */
const PRODUCT: System = 'slivingdoc-mcp';

function check(
  id: string,
  description: string,
  value: number | undefined,
  direction: '>=' | '<=',
  threshold: number,
): TargetCheck {
  const met =
    value === undefined ? undefined : direction === '>=' ? value >= threshold : value <= threshold;
  return { id, description, value, threshold, direction, met };
}

function loadRow(m: Measured, scenario: string, store: StoreKind, writers?: number) {
  return m.load.find(
    (r) =>
      r.scenario === scenario &&
      r.system === PRODUCT &&
      r.store === store &&
      (writers === undefined || r.metrics.writers === writers),
  )?.metrics;
}

/** Every commit of the burst accepted, p99 within `p99Ms`. */
function burstChecks(m: Measured, store: StoreKind, where: string, p99Ms: number): TargetCheck[] {
  const metrics = loadRow(m, 'burst', store);
  const writers = metrics?.writers ?? 100;
  return [
    check(
      `burst-${store}`,
      `burst of ${writers} on the ${where}: accepted commits`,
      metrics?.accepted,
      '>=',
      writers,
    ),
    check(
      `burst-p99-${store}`,
      `burst of ${writers} on the ${where}: p99 ms`,
      metrics?.latency?.p99,
      '<=',
      p99Ms,
    ),
  ];
}

/** The largest and smallest saturation runs on `store`. */
function saturationEnds(m: Measured, store: StoreKind) {
  const rows = m.load
    .filter((r) => r.scenario === 'saturation' && r.system === PRODUCT && r.store === store)
    .sort((a, b) => a.metrics.writers - b.metrics.writers);
  return { one: rows[0]?.metrics, most: rows.at(-1)?.metrics };
}

/** Saturation at the most writers against one writer, and its CAS per commit. */
function saturationChecks(m: Measured, store: StoreKind, where: string): TargetCheck[] {
  const { one, most } = saturationEnds(m, store);
  const n = most?.writers ?? 64;
  return [
    check(
      `saturation-ratio-${store}`,
      `saturation on the ${where}: commits/s at ${n} writers / at ${one?.writers ?? 1}`,
      one && most ? most.commitsPerSecond / one.commitsPerSecond : undefined,
      '>=',
      2,
    ),
    check(
      `saturation-cas-${store}`,
      `saturation on the ${where}, ${n} writers: CAS attempts per accepted commit`,
      most?.casAttemptsPerCommit,
      '<=',
      0.2,
    ),
  ];
}

/** On S3, the most writers beat twice the raw CAS rate of one loop (one CAS each). */
function beyondRawCas(m: Measured): TargetCheck {
  const { most } = saturationEnds(m, 's3');
  const raw = m.rawCas.filter((r) => r.store === 's3').sort((a, b) => a.writers - b.writers)[0];
  return check(
    'saturation-vs-raw-cas-s3',
    `saturation on the S3 server, ${most?.writers ?? 64} writers: commits/s / raw CAS/s of ${raw?.writers ?? 1} loop`,
    most && raw ? most.commitsPerSecond / raw.casPerSecond : undefined,
    '>=',
    2,
  );
}

/** The distributed scenario on S3, every commit accepted, p99 ≤ 2 s. */
function distributedChecks(m: Measured): TargetCheck[] {
  const metrics = loadRow(m, 'distributed', 's3');
  const attempted = metrics?.attempted ?? 200;
  return [
    check(
      'distributed-s3',
      `distributed on the S3 server: accepted of ${attempted}`,
      metrics?.accepted,
      '>=',
      attempted,
    ),
    check(
      'distributed-p99-s3',
      'distributed on the S3 server: p99 ms',
      metrics?.latency?.p99,
      '<=',
      2000,
    ),
  ];
}

/** A lone writer's p50 with group commit against without, same run. */
function loneCheck(m: Measured, store: StoreKind, where: string): TargetCheck {
  const row = (m.lone ?? []).find((r) => r.store === store);
  return check(
    `lone-${store}`,
    `one writer alone on the ${where}: commit p50 with group commit / without`,
    row ? row.grouped.p50 / row.ungrouped.p50 : undefined,
    '<=',
    1.1,
  );
}

/**
 * The largest append burst run on `store` (100 in full mode): no conflict, one
 * commit call per writer, every line once.
 */
function appendBurstChecks(m: Measured, store: StoreKind, where: string): TargetCheck[] {
  const largest = (m.appendBurst ?? [])
    .filter((r) => r.system === PRODUCT && r.store === store)
    .sort((a, b) => b.writers - a.writers)[0];
  const writers = largest?.writers ?? 100;
  const what = `append burst of ${writers} on the ${where}`;
  return [
    check(`append-conflicts-${store}`, `${what}: conflicts`, largest?.conflicts, '<=', 0),
    check(`append-calls-${store}`, `${what}: commit calls`, largest?.commitCalls, '<=', writers),
    check(
      `append-lines-${store}`,
      `${what}: every line once (1 = yes)`,
      largest === undefined ? undefined : Number(largest.everyLineOnce),
      '>=',
      1,
    ),
  ];
}

/**
 * The long run on `store`: the last window against the first (commit p50, server RSS), P's files
 * at the end, and a fresh directory's cold pull at the end against after the first window.
 */
function longRunChecks(m: Measured, store: StoreKind, where: string): TargetCheck[] {
  const run = (m.longRun ?? []).find((r) => r.store === store);
  const first = run?.windows[0];
  const last = run?.windows.at(-1);
  const what = `long run of ${run?.commits ?? '?'} commits on the ${where}`;
  const rss =
    first?.rssBytes != null && last?.rssBytes != null ? last.rssBytes / first.rssBytes : undefined;
  return [
    check(
      `long-run-p50-${store}`,
      `${what}: commit p50 last window / first`,
      first && last ? last.p50 / first.p50 : undefined,
      '<=',
      1.15,
    ),
    check(`long-run-rss-${store}`, `${what}: server RSS last window / first`, rss, '<=', 1.15),
    check(
      `long-run-files-${store}`,
      `${what}: files in P at the end`,
      last?.privateFiles,
      '<=',
      50,
    ),
  ];
}

function scaleRatio(m: Measured): number | undefined {
  const rows = m.scale
    .filter((r) => r.system === PRODUCT && r.store === 'embedded')
    .sort((a, b) => a.files - b.files);
  if (rows.length < 2) return undefined;
  return rows[rows.length - 1]!.latency.p50 / rows[0]!.latency.p50;
}

function warmPullRatio(m: Measured): number | undefined {
  const row = m.pull.find((r) => r.system === PRODUCT && r.store === 'embedded');
  return row ? row.warm.p50 / row.noop.p50 : undefined;
}

/**
 * Evaluates the targets on one run's figures (ratios from the same run): the burst,
 * saturation, distributed and lone-writer targets of group commit (which replaced "≥ 50 % of the
 * raw compare-and-swap ceiling" and "50 commits/s at 16 writers"), the append bursts, and the
 * scale and warm-pull ratios.
 */
export function evaluateTargets(m: Measured): TargetCheck[] {
  const scale = m.scale.filter((r) => r.system === PRODUCT && r.store === 'embedded');
  const sizes = scale.map((r) => r.files).sort((a, b) => a - b);
  return [
    ...burstChecks(m, 'embedded', 'embedded store', 2000),
    ...burstChecks(m, 's3', 'S3 server', 3000),
    ...saturationChecks(m, 'embedded', 'embedded store'),
    ...saturationChecks(m, 's3', 'S3 server'),
    beyondRawCas(m),
    ...distributedChecks(m),
    loneCheck(m, 'embedded', 'embedded store'),
    loneCheck(m, 's3', 'S3 server'),
    ...appendBurstChecks(m, 'embedded', 'embedded store'),
    ...appendBurstChecks(m, 's3', 'S3 server'),
    ...longRunChecks(m, 'embedded', 'embedded store'),
    ...longRunChecks(m, 's3', 'S3 server'),
    check(
      'scale-ratio',
      `commit latency p50 at ${sizes.at(-1) ?? '?'} files / at ${sizes[0] ?? '?'} files (embedded)`,
      scaleRatio(m),
      '<=',
      3,
    ),
    check(
      'warm-pull-ratio',
      'warm pull of one increment p50 / no-op pull p50 (embedded)',
      warmPullRatio(m),
      '<=',
      2,
    ),
  ];
}
