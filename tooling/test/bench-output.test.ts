import { formatNumber, renderColumns } from '@slivingdoc/testkit/table';
import { describe, expect, it } from 'vitest';
import { escapeXml, renderChart, renderPanel } from '../bench/chart';
import type { BenchReport, LoadResult } from '../bench/report';
import { renderReport } from '../bench/table';
import { evaluateTargets } from '../bench/targets';

const latency = (p50: number) => ({
  count: 10,
  min: 1,
  p50,
  p90: p50 * 2,
  p99: p50 * 3,
  max: p50 * 4,
  mean: p50,
});

function load(
  partial: Partial<LoadResult> & Pick<LoadResult, 'scenario' | 'system' | 'store'>,
  writers: number,
  accepted: number,
  rate: number,
): LoadResult {
  return {
    ...partial,
    metrics: {
      writers,
      attempted: writers,
      accepted,
      remoteBusy: writers - accepted,
      failed: 0,
      failures: {},
      commitsPerSecond: rate,
      casAttemptsPerCommit: 1.5,
      latency: latency(20),
      durationMs: 1000,
    },
  };
}

function sampleReport(): BenchReport {
  const measured = {
    load: [
      load({ scenario: 'burst', system: 'slivingdoc-mcp', store: 'embedded' }, 100, 98, 40),
      load({ scenario: 'burst', system: 'git', store: 'local-disk' }, 100, 17, 3),
      load({ scenario: 'saturation', system: 'slivingdoc-mcp', store: 'embedded' }, 1, 150, 30),
      load({ scenario: 'saturation', system: 'slivingdoc-mcp', store: 'embedded' }, 64, 300, 60),
      load({ scenario: 'saturation', system: 'slivingdoc-mcp', store: 's3' }, 1, 50, 10),
      load({ scenario: 'saturation', system: 'slivingdoc-mcp', store: 's3' }, 64, 60, 12),
    ],
    lone: [
      {
        scenario: 'lone' as const,
        store: 'embedded' as const,
        commits: 10,
        grouped: latency(21),
        ungrouped: latency(20),
      },
    ],
    pull: [
      {
        scenario: 'pull' as const,
        system: 'slivingdoc-mcp' as const,
        store: 'embedded' as const,
        files: 10000,
        cold: latency(900),
        warm: latency(30),
        noop: latency(20),
      },
    ],
    scale: [
      {
        scenario: 'scale' as const,
        system: 'slivingdoc-mcp' as const,
        store: 'embedded' as const,
        files: 100,
        latency: latency(10),
      },
      {
        scenario: 'scale' as const,
        system: 'slivingdoc-mcp' as const,
        store: 'embedded' as const,
        files: 10000,
        latency: latency(40),
      },
    ],
    rawCas: [
      {
        store: 'embedded' as const,
        writers: 1,
        casPerSecond: 100,
        roundTrip: latency(10),
        lost: 0,
      },
      {
        store: 'embedded' as const,
        writers: 16,
        casPerSecond: 150,
        roundTrip: latency(80),
        lost: 40,
      },
      { store: 's3' as const, writers: 1, casPerSecond: 8, roundTrip: latency(10), lost: 0 },
    ],
  };
  return {
    version: 1,
    mode: 'quick',
    complete: true,
    startedAt: '2025-01-01T00:00:00.000Z',
    finishedAt: '2025-01-01T00:01:00.000Z',
    machine: { cpus: 2, cpuModel: 'test cpu', memoryGiB: 24, node: 'v20', git: 'git version 2' },
    ...measured,
    targets: evaluateTargets(measured),
    errors: [{ scenario: 'pull', system: 'slivingdoc-mcp', store: 's3', message: 'server <gone>' }],
  };
}

describe('bench targets', () => {
  it('evaluates each target as met, missed or not measured from the same run', () => {
    const targets = Object.fromEntries(evaluateTargets(sampleReport()).map((t) => [t.id, t]));
    // Every commit of the burst accepted, p99 within 2 s (3 s on S3).
    expect(targets['burst-embedded']).toMatchObject({ value: 98, threshold: 100, met: false });
    expect(targets['burst-p99-embedded']).toMatchObject({ value: 60, met: true });
    expect(targets['burst-s3']).toMatchObject({ value: undefined, met: undefined });
    // 64 writers against 1 on each store, CAS per commit at 64, and S3 beyond its raw CAS.
    expect(targets['saturation-ratio-embedded']).toMatchObject({ value: 2, met: true });
    expect(targets['saturation-ratio-s3']).toMatchObject({ value: 1.2, met: false });
    expect(targets['saturation-cas-embedded']).toMatchObject({ value: 1.5, met: false });
    expect(targets['saturation-vs-raw-cas-s3']).toMatchObject({ value: 1.5, met: false });
    expect(targets['lone-embedded']).toMatchObject({ value: 1.05, met: true });
    expect(targets['lone-s3']).toMatchObject({ value: undefined, met: undefined });
    expect(targets['distributed-s3']).toMatchObject({ value: undefined, met: undefined });
    // The targets no longer set (saturation at 16 writers: 50 commits/s, ≥ 50 % of raw CAS) are gone.
    expect(targets['saturation-16']).toBeUndefined();
    expect(targets['saturation-16-share']).toBeUndefined();
    expect(targets['scale-ratio']).toMatchObject({ value: 4, met: false });
    expect(targets['warm-pull-ratio']).toMatchObject({ value: 1.5, met: true });
  });
});

describe('bench table', () => {
  it('pads columns to the widest cell', () => {
    expect(renderColumns(['a', 'bb'], [['ccc', 'd']])).toBe('a    bb\n---  --\nccc  d');
    expect(formatNumber(undefined)).toBe('–');
    expect(formatNumber(3)).toBe('3');
    expect(formatNumber(2.345)).toBe('2.35');
    expect(formatNumber(123.45)).toBe('123.5');
  });

  it('prints every scenario, the git baseline, the targets and what could not run', () => {
    const text = renderReport(sampleReport());
    expect(text).toMatch(/burst\s+mcp · embedded\s+100\s+98\/100\s+2\s+0\s+40/);
    expect(text).toMatch(/burst\s+git \(bare repo\)\s+100\s+17\/100/);
    expect(text).toMatch(/embedded\s+16\s+150\s+40/);
    expect(text).toMatch(
      /saturation on the embedded store: commits\/s at 64 writers \/ at 1\s+2\s+>= 2\s+yes/,
    );
    expect(text).toMatch(/one writer alone\s+commits.*\n.*\nembedded\s+10\s+21/);
    expect(text).toMatch(
      /burst of 100 on the S3 server: accepted commits\s+–\s+>= 100\s+not measured/,
    );
    expect(text).toContain('could not run: pull · mcp · s3: server <gone>');
  });
});

describe('bench chart', () => {
  it('escapes text so labels cannot break the document', () => {
    expect(escapeXml('a<b & "c">')).toBe('a&lt;b &amp; &quot;c&quot;&gt;');
  });

  it('draws bars in proportion on a log scale and marks what was not measured', () => {
    const { svg, height } = renderPanel(
      {
        title: 't',
        unit: 'u',
        scale: 'log',
        rows: [
          { label: 'ten', value: 10, color: '#000' },
          { label: 'thousand', value: 1000, color: '#000' },
          { label: 'none', value: undefined, color: '#000' },
        ],
      },
      0,
    );
    const widths = [...svg.matchAll(/<rect [^>]*width="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(widths).toHaveLength(2);
    expect(widths[1]! / widths[0]!).toBeCloseTo(3, 2); // log10: 1 → 3 decades from 10^0
    expect(svg).toContain('not measured');
    expect(height).toBeGreaterThan(3 * 18);
  });

  it('renders a well-formed standalone SVG with throughput, latency, burst and pull panels', () => {
    const svg = renderChart(sampleReport());
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    for (const title of [
      'Accepted commits per second',
      'Commit latency',
      'Burst:',
      'Pull and scale',
    ]) {
      expect(svg).toContain(title);
    }
    expect(svg).toContain('git (bare repo)');
    expect(svg).toContain('raw CAS embedded');
    // every opened element is closed or self-closed
    const opened = (svg.match(/<(svg|text|style)\b/g) ?? []).length;
    const closed = (svg.match(/<\/(svg|text|style)>/g) ?? []).length;
    expect(opened).toBe(closed);
    expect(svg).not.toMatch(/NaN|undefined|Infinity/);
  });
});
