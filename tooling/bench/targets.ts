import type { BenchReport, StoreKind, System, TargetCheck } from './report';

type Measured = Pick<BenchReport, 'load' | 'pull' | 'scale' | 'rawCas' | 'appendBurst'>;

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

function burst(m: Measured, store: StoreKind) {
  return m.load.find((r) => r.scenario === 'burst' && r.system === PRODUCT && r.store === store)
    ?.metrics;
}

/** The 97 of 100, scaled to the burst size actually run (quick mode runs fewer). */
function burstCheck(m: Measured, store: StoreKind, where: string): TargetCheck {
  const metrics = burst(m, store);
  const writers = metrics?.writers ?? 100;
  return check(
    `burst-${store}`,
    `burst of ${writers} on the ${where}: accepted commits`,
    metrics?.accepted,
    '>=',
    Math.ceil(writers * 0.97),
  );
}

/**
 * Issue 16 at the largest append burst run on `store` (100 in full mode): no conflict, one
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

function saturationRate(m: Measured, writers: number): number | undefined {
  return m.load.find(
    (r) =>
      r.scenario === 'saturation' &&
      r.system === PRODUCT &&
      r.store === 'embedded' &&
      r.metrics.writers === writers,
  )?.metrics.commitsPerSecond;
}

/** The raw ceiling: the best compare-and-swap rate the embedded store reached at any concurrency. */
function rawCeiling(m: Measured): number | undefined {
  const rates = m.rawCas.filter((r) => r.store === 'embedded').map((r) => r.casPerSecond);
  return rates.length > 0 ? Math.max(...rates) : undefined;
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

/** Evaluates the targets on one run's figures (ratios from the same run). */
export function evaluateTargets(m: Measured): TargetCheck[] {
  const rate16 = saturationRate(m, 16);
  const ceiling = rawCeiling(m);
  const scale = m.scale.filter((r) => r.system === PRODUCT && r.store === 'embedded');
  const sizes = scale.map((r) => r.files).sort((a, b) => a - b);
  return [
    burstCheck(m, 'embedded', 'embedded store'),
    burstCheck(m, 's3', 'S3 server'),
    ...appendBurstChecks(m, 'embedded', 'embedded store'),
    ...appendBurstChecks(m, 's3', 'S3 server'),
    check('saturation-16', 'saturation, 16 writers, embedded: commits/s', rate16, '>=', 50),
    check(
      'saturation-16-share',
      'saturation, 16 writers, embedded: share of the raw compare-and-swap ceiling',
      rate16 !== undefined && ceiling ? rate16 / ceiling : undefined,
      '>=',
      0.5,
    ),
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
