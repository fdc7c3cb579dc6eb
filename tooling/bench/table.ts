import { formatNumber, renderColumns } from '@slivingdoc/testkit/table';
import { type BenchReport, label } from './report';
import { hubRows } from './scenarios/hub';
import type { LatencySummary } from './stats';

const ms = (s: LatencySummary | undefined, key: keyof LatencySummary) => formatNumber(s?.[key], 0);

/** The one table `pnpm bench` prints: every scenario, slivingdoc beside git. */
export function renderReport(report: BenchReport): string {
  const sections: string[] = [];
  sections.push(
    `slivingdoc benchmarks (${report.mode} mode${report.complete ? '' : ', PARTIAL: run cut short'}) · ${report.machine.cpus} cores ${report.machine.cpuModel} · node ${report.machine.node} · ${report.machine.git}`,
  );
  sections.push(
    renderColumns(
      [
        'scenario',
        'system · store',
        'writers',
        'accepted',
        'busy',
        'failed',
        'commits/s',
        'CAS/commit',
        'CPU ms/commit',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'commits per increment',
      ],
      report.load.map((r) => [
        r.scenario === 'hosts' ? `hosts (${r.metrics.hosts})` : r.scenario,
        label(r.system, r.store),
        String(r.metrics.writers),
        `${r.metrics.accepted}/${r.metrics.attempted}`,
        String(r.metrics.remoteBusy),
        String(r.metrics.failed),
        formatNumber(r.metrics.commitsPerSecond),
        formatNumber(r.metrics.casAttemptsPerCommit),
        formatNumber(r.metrics.cpuMsPerCommit, 0),
        ms(r.metrics.latency, 'p50'),
        ms(r.metrics.latency, 'p90'),
        ms(r.metrics.latency, 'p99'),
        r.metrics.groupSizes ?? '',
      ]),
    ),
  );
  if ((report.lone ?? []).length > 0) {
    sections.push(
      renderColumns(
        ['one writer alone', 'commits', 'grouped p50 ms', 'p99 ms', 'ungrouped p50 ms', 'p99 ms'],
        (report.lone ?? []).map((r) => [
          r.store,
          String(r.commits),
          formatNumber(r.grouped.p50, 1),
          formatNumber(r.grouped.p99, 1),
          formatNumber(r.ungrouped.p50, 1),
          formatNumber(r.ungrouped.p99, 1),
        ]),
      ),
    );
  }
  for (const run of report.longRun ?? []) {
    sections.push(
      renderColumns(
        [
          `long run · ${run.store}${run.checkpointPacks === null ? '' : ` · --checkpoint-packs ${run.checkpointPacks}`}`,
          'commit p50 ms',
          'p99 ms',
          'server RSS MiB',
          'server CPU ms/commit',
          'files in P',
          'P KiB',
        ],
        run.windows.map((w) => [
          `${w.from}–${w.to}`,
          formatNumber(w.p50, 1),
          formatNumber(w.p99, 1),
          w.rssBytes === null ? '' : formatNumber(w.rssBytes / 2 ** 20, 0),
          w.cpuMsPerCommit == null ? '' : formatNumber(w.cpuMsPerCommit, 1),
          String(w.privateFiles),
          formatNumber(w.privateBytes / 1024, 0),
        ]),
      ),
    );
    sections.push(
      `long run · ${run.store}: a fresh directory's cold pull ${formatNumber(run.freshPull.afterFirstWindowMs, 0)} ms after the first window, ${formatNumber(run.freshPull.atEndMs, 0)} ms at the end`,
    );
  }
  if ((report.appendBurst ?? []).length > 0) {
    sections.push(
      renderColumns(
        [
          'append burst',
          'system · store',
          'writers',
          'accepted',
          'conflicts',
          'commit calls',
          'retried',
          'wall ms',
          'p50 ms',
          'p99 ms',
          'every line once',
        ],
        (report.appendBurst ?? []).map((r) => [
          'append burst',
          label(r.system, r.store),
          String(r.writers),
          `${r.accepted}/${r.writers}`,
          String(r.conflicts),
          String(r.commitCalls),
          Object.entries(r.retried ?? {})
            .map(([code, count]) => `${code} ${count}`)
            .join(', ') || '0',
          formatNumber(r.durationMs, 0),
          ms(r.latency, 'p50'),
          ms(r.latency, 'p99'),
          r.everyLineOnce ? 'yes' : 'NO',
        ]),
      ),
    );
  }
  if (report.rawCas.length > 0) {
    sections.push(
      renderColumns(
        ['raw compare-and-swap', 'writers', 'CAS/s', 'lost', 'round trip p50 ms', 'p99 ms'],
        report.rawCas.map((r) => [
          r.store,
          String(r.writers),
          formatNumber(r.casPerSecond),
          String(r.lost),
          formatNumber(r.roundTrip.p50, 2),
          formatNumber(r.roundTrip.p99, 2),
        ]),
      ),
    );
  }
  if (report.pull.length > 0) {
    sections.push(
      renderColumns(
        [
          'pull',
          'system · store',
          'files',
          'cold p50 ms',
          'warm p50 ms',
          'no-op p50 ms',
          'warm/no-op',
        ],
        report.pull.map((r) => [
          'pull',
          label(r.system, r.store),
          String(r.files),
          ms(r.cold, 'p50'),
          ms(r.warm, 'p50'),
          ms(r.noop, 'p50'),
          formatNumber(r.warm.p50 / r.noop.p50, 2),
        ]),
      ),
    );
  }
  if (report.scale.length > 0) {
    sections.push(
      renderColumns(
        ['scale', 'system · store', 'files', 'commit p50 ms', 'p90 ms', 'max ms'],
        report.scale.map((r) => [
          'scale',
          label(r.system, r.store),
          String(r.files),
          ms(r.latency, 'p50'),
          ms(r.latency, 'p90'),
          ms(r.latency, 'max'),
        ]),
      ),
    );
  }
  if ((report.hub ?? []).length > 0) {
    sections.push(
      renderColumns(
        ['one host, many agents', 'store', 'stdio processes', 'one hub', 'target'],
        hubRows(report.hub ?? []),
      ),
    );
  }
  sections.push(
    renderColumns(
      ['target', 'measured', 'needed', 'met'],
      report.targets.map((t) => [
        t.description,
        formatNumber(t.value, 2),
        `${t.direction} ${t.threshold}`,
        t.met === undefined ? 'not measured' : t.met ? 'yes' : 'NO',
      ]),
    ),
  );
  for (const e of report.errors) {
    sections.push(`could not run: ${e.scenario} · ${label(e.system, e.store)}: ${e.message}`);
  }
  return `${sections.join('\n\n')}\n`;
}
