// The chart is written by hand: a few labelled horizontal bar panels need no chart library,
// and plain SVG text keeps bench-results/latest.svg diffable and readable in any browser.

import { formatNumber } from '@slivingdoc/testkit/table';
import { type BenchReport, label, type System } from './report';

export interface BarRow {
  label: string;
  value: number | undefined;
  color: string;
  /** A second, lighter bar drawn behind the first (e.g. p99 behind p50). */
  behind?: number;
}

export interface Marker {
  label: string;
  value: number;
}

export interface Panel {
  title: string;
  unit: string;
  scale: 'log' | 'linear';
  rows: BarRow[];
  markers?: Marker[];
}

const WIDTH = 1000;
const LABEL_WIDTH = 300;
const PLOT_WIDTH = WIDTH - LABEL_WIDTH - 90;
const ROW_HEIGHT = 18;
const PANEL_HEAD = 46;
const PANEL_FOOT = 26;

const COLORS: Record<System, { embedded: string; other: string }> = {
  'slivingdoc-mcp': { embedded: '#1f5fbf', other: '#6f9fe6' },
  'slivingdoc-hub': { embedded: '#7a3fbf', other: '#b58ee6' },
  'slivingdoc-engine': { embedded: '#138a72', other: '#6cc7b4' },
  git: { embedded: '#d9661f', other: '#d9661f' },
};

/** Bar colour: one hue per system, lighter on the S3 server than on the embedded store. */
export function colorFor(system: System, store: string): string {
  return store === 's3' ? COLORS[system].other : COLORS[system].embedded;
}

/** Escapes text for SVG character data and attribute values. */
export function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

interface Axis {
  position(value: number): number;
  ticks: number[];
}

function axisFor(panel: Panel): Axis {
  const values = panel.rows
    .flatMap((r) => [r.value, r.behind])
    .concat((panel.markers ?? []).map((m) => m.value))
    .filter((v): v is number => v !== undefined && Number.isFinite(v) && v > 0);
  const max = values.length > 0 ? Math.max(...values) : 1;
  if (panel.scale === 'linear') {
    const top = niceCeiling(max);
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
    return { position: (v) => (Math.max(0, v) / top) * PLOT_WIDTH, ticks };
  }
  const min = values.length > 0 ? Math.min(...values) : 1;
  // One decade below the smallest value, so the shortest bar is still visible.
  const lo = Math.ceil(Math.log10(min)) - 1;
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(max)));
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e++) ticks.push(10 ** e);
  return {
    position: (v) =>
      v <= 0 ? 0 : ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * PLOT_WIDTH,
    ticks,
  };
}

function niceCeiling(value: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const steps = [1, 2, 2.5, 5, 10];
  return magnitude * steps.find((s) => s * magnitude >= value)!;
}

function tickLabel(value: number): string {
  return value >= 1 ? String(Number(value.toPrecision(3))) : String(value);
}

/** Renders one panel at vertical offset `top`; returns its SVG and height. */
export function renderPanel(panel: Panel, top: number): { svg: string; height: number } {
  const axis = axisFor(panel);
  const plotTop = top + PANEL_HEAD;
  const plotHeight = Math.max(1, panel.rows.length) * ROW_HEIGHT;
  const parts: string[] = [];
  parts.push(
    `<text x="12" y="${top + 22}" class="title">${escapeXml(panel.title)}</text>`,
    `<text x="${LABEL_WIDTH}" y="${top + 38}" class="note">${escapeXml(`${panel.unit}, ${panel.scale === 'log' ? 'logarithmic scale' : 'linear scale'}`)}</text>`,
  );
  for (const tick of axis.ticks) {
    const x = LABEL_WIDTH + axis.position(tick);
    parts.push(
      `<line x1="${x.toFixed(1)}" y1="${plotTop}" x2="${x.toFixed(1)}" y2="${plotTop + plotHeight}" class="grid"/>`,
      `<text x="${x.toFixed(1)}" y="${plotTop + plotHeight + 14}" class="tick">${tickLabel(tick)}</text>`,
    );
  }
  panel.rows.forEach((row, i) => {
    const y = plotTop + i * ROW_HEIGHT;
    parts.push(
      `<text x="${LABEL_WIDTH - 8}" y="${y + 13}" class="label">${escapeXml(row.label)}</text>`,
    );
    if (row.behind !== undefined && row.behind > 0) {
      parts.push(
        `<rect x="${LABEL_WIDTH}" y="${y + 3}" width="${axis.position(row.behind).toFixed(1)}" height="${ROW_HEIGHT - 6}" fill="${row.color}" opacity="0.3"/>`,
      );
    }
    if (row.value === undefined) {
      parts.push(`<text x="${LABEL_WIDTH + 4}" y="${y + 13}" class="value">not measured</text>`);
      return;
    }
    const width = axis.position(row.value);
    parts.push(
      `<rect x="${LABEL_WIDTH}" y="${y + 3}" width="${width.toFixed(1)}" height="${ROW_HEIGHT - 6}" fill="${row.color}"/>`,
    );
    const valueText =
      row.behind !== undefined
        ? `${formatNumber(row.value)} / ${formatNumber(row.behind)}`
        : formatNumber(row.value);
    const textX = LABEL_WIDTH + Math.max(width, row.behind ? axis.position(row.behind) : 0) + 4;
    parts.push(`<text x="${textX.toFixed(1)}" y="${y + 13}" class="value">${valueText}</text>`);
  });
  for (const marker of panel.markers ?? []) {
    const x = LABEL_WIDTH + axis.position(marker.value);
    parts.push(
      `<line x1="${x.toFixed(1)}" y1="${plotTop - 4}" x2="${x.toFixed(1)}" y2="${plotTop + plotHeight}" class="marker"/>`,
      `<text x="${x.toFixed(1)}" y="${plotTop - 6}" class="marker-label">${escapeXml(marker.label)}</text>`,
    );
  }
  return { svg: parts.join('\n'), height: PANEL_HEAD + plotHeight + PANEL_FOOT };
}

function loadRowLabel(r: BenchReport['load'][number]): string {
  const who = label(r.system, r.store);
  return r.scenario === 'saturation'
    ? `saturation ${r.metrics.writers} writer${r.metrics.writers === 1 ? '' : 's'} · ${who}`
    : `${r.scenario} · ${who}`;
}

/** The panels of one report: throughput, latency, burst outcome, pull and scale. */
export function panelsFor(report: BenchReport): Panel[] {
  const panels: Panel[] = [];
  panels.push({
    title: 'Accepted commits per second (longer is better)',
    unit: 'commits/s',
    scale: 'log',
    rows: report.load.map((r) => ({
      label: loadRowLabel(r),
      value: r.metrics.commitsPerSecond,
      color: colorFor(r.system, r.store),
    })),
    markers: report.rawCas
      .filter((r) => r.writers === 1)
      .map((r) => ({ label: `raw CAS ${r.store}`, value: r.casPerSecond })),
  });
  panels.push({
    title: 'Commit latency: p50 (solid) and p99 (pale) (shorter is better)',
    unit: 'milliseconds',
    scale: 'log',
    rows: report.load.map((r) => ({
      label: loadRowLabel(r),
      value: r.metrics.latency?.p50,
      behind: r.metrics.latency?.p99,
      color: colorFor(r.system, r.store),
    })),
  });
  const bursts = report.load.filter((r) => r.scenario === 'burst');
  if (bursts.length > 0) {
    panels.push({
      title: 'Burst: commits accepted of those sent at the same instant (longer is better)',
      unit: 'accepted commits',
      scale: 'linear',
      rows: bursts.map((r) => ({
        label: `${label(r.system, r.store)} (${r.metrics.remoteBusy} busy, ${r.metrics.failed} failed)`,
        value: r.metrics.accepted,
        color: colorFor(r.system, r.store),
      })),
      markers: report.targets
        .filter((t) => t.id === 'burst-embedded')
        .map((t) => ({ label: `target ${t.threshold}`, value: t.threshold })),
    });
  }
  const timings = [
    ...report.pull.flatMap((r) => [
      { label: `cold pull ${r.files} files · ${label(r.system, r.store)}`, v: r.cold.p50, r },
      { label: `warm pull 1 increment · ${label(r.system, r.store)}`, v: r.warm.p50, r },
      { label: `no-op pull · ${label(r.system, r.store)}`, v: r.noop.p50, r },
    ]),
    ...report.scale.map((r) => ({
      label: `commit 1 file of ${r.files} · ${label(r.system, r.store)}`,
      v: r.latency.p50,
      r,
    })),
  ];
  if (timings.length > 0) {
    panels.push({
      title: 'Pull and scale: median time (shorter is better)',
      unit: 'milliseconds',
      scale: 'log',
      rows: timings.map((t) => ({
        label: t.label,
        value: t.v,
        color: colorFor(t.r.system, t.r.store),
      })),
    });
  }
  return panels;
}

/** The whole chart as a standalone SVG document. */
export function renderChart(report: BenchReport): string {
  let top = 40;
  const bodies: string[] = [];
  for (const panel of panelsFor(report)) {
    const { svg, height } = renderPanel(panel, top);
    bodies.push(svg);
    top += height;
  }
  const legend = (
    [
      ['slivingdoc over MCP stdio, embedded store', colorFor('slivingdoc-mcp', 'embedded')],
      ['slivingdoc over MCP stdio, S3 server', colorFor('slivingdoc-mcp', 's3')],
      ['slivingdoc in-process engine, embedded', colorFor('slivingdoc-engine', 'embedded')],
      ['slivingdoc in-process engine, S3 server', colorFor('slivingdoc-engine', 's3')],
      ['git: bare repo, clone per writer', colorFor('git', 'local-disk')],
    ] as const
  )
    .map(([text, color], i) => {
      // three entries per line, so long entries never overlap
      const x = 12 + (i % 3) * 330;
      const y = top + 4 + Math.floor(i / 3) * 18;
      return `<rect x="${x}" y="${y}" width="12" height="12" fill="${color}"/><text x="${x + 16}" y="${y + 10}" class="note">${escapeXml(text)}</text>`;
    })
    .join('\n');
  const height = top + 50;
  const heading = `slivingdoc vs git · ${report.mode} mode${report.complete ? '' : ' (PARTIAL: run cut short)'} · ${report.machine.cpus} cores · node ${report.machine.node} · ${report.startedAt}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
<style>
.title{font-size:14px;font-weight:bold;fill:#222}
.heading{font-size:16px;font-weight:bold;fill:#111}
.label{font-size:11px;fill:#222;text-anchor:end}
.value{font-size:10px;fill:#333}
.tick{font-size:10px;fill:#666;text-anchor:middle}
.note{font-size:11px;fill:#555}
.grid{stroke:#ddd;stroke-width:1}
.marker{stroke:#b00020;stroke-width:1.5;stroke-dasharray:4 3}
.marker-label{font-size:10px;fill:#b00020;text-anchor:middle}
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="12" y="24" class="heading">${escapeXml(heading)}</text>
${bodies.join('\n')}
${legend}
</svg>
`;
}
