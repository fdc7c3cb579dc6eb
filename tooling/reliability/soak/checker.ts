import type { WriterLedger, WriterTotals } from './ledger';

/** The soak's verdict: totals over every writer and everything that went missing. */
export interface SoakReport extends WriterTotals {
  writers: number;
  acknowledgedLines: number;
  /** Acknowledged lines absent from the final notebook and not removed by the resolver. */
  lost: number;
  lostLines: { file: string; line: string; generation: number }[];
  /**
   * Generations reported by more than one publishing OK: informational since group commit
   * (the members of one group share the generation of its CAS).
   */
  duplicateGenerations: number[];
  /** The highest generation any publishing OK reported (0 when none). */
  maxPublishedGeneration: number;
  /** Files of the final notebook that still hold a marker line. */
  filesWithMarkers: string[];
  anomalies: string[];
}

const MARKER_LINE = /^(<<<<<<< local|=======|>>>>>>> remote)\r?$/m;

/**
 * Proves the soak's promise: every line a writer was told OK about is in the final
 * notebook's file, unless the conflict resolver deliberately removed it (it records every
 * removal), and no marker survived. Generations told to several publishing commits are listed
 * (the members of one group share one).
 */
export function checkSoak(ledgers: WriterLedger[], finalFiles: Map<string, string>): SoakReport {
  const totals: WriterTotals = {
    commits: 0,
    conflicts: 0,
    retries: 0,
    remoteBusy: 0,
    transient: 0,
  };
  const removedByResolver = new Set<string>();
  const generations = new Map<number, number>();
  const report: SoakReport = {
    ...totals,
    writers: ledgers.length,
    acknowledgedLines: 0,
    lost: 0,
    lostLines: [],
    duplicateGenerations: [],
    maxPublishedGeneration: 0,
    filesWithMarkers: [],
    anomalies: [],
  };
  const linesOf = new Map<string, Set<string>>();
  for (const [file, text] of finalFiles) {
    linesOf.set(
      file,
      new Set((text.match(/[^\n]*\n|[^\n]+$/g) ?? []).map((l) => l.replace(/\r?\n$/, ''))),
    );
    if (MARKER_LINE.test(text)) report.filesWithMarkers.push(file);
  }
  for (const ledger of ledgers) {
    for (const key of Object.keys(totals) as (keyof WriterTotals)[])
      report[key] += ledger.totals[key];
    for (const r of ledger.resolutions)
      for (const line of r.removed) removedByResolver.add(`${r.file}\0${line}`);
    for (const g of ledger.publishedGenerations) generations.set(g, (generations.get(g) ?? 0) + 1);
    report.anomalies.push(...ledger.anomalies.map((a) => `writer ${ledger.writer}: ${a}`));
  }
  for (const ledger of ledgers) {
    for (const ack of ledger.acknowledged) {
      report.acknowledgedLines += 1;
      if (linesOf.get(ack.file)?.has(ack.line)) continue;
      if (removedByResolver.has(`${ack.file}\0${ack.line}`)) continue;
      report.lostLines.push(ack);
    }
  }
  report.lost = report.lostLines.length;
  report.duplicateGenerations = [...generations].filter(([, n]) => n > 1).map(([g]) => g);
  report.maxPublishedGeneration = Math.max(0, ...generations.keys());
  return report;
}

/** One line of figures, as `pnpm soak` prints it and docs/reliability.md records it. */
export function formatSoakTotals(label: string, r: SoakReport): string {
  return `${label}: writers ${r.writers}, commits ${r.commits}, conflicts ${r.conflicts}, retries ${r.retries}, REMOTE_BUSY ${r.remoteBusy}, other retried ${r.transient}, acknowledged lines ${r.acknowledgedLines}, lost = ${r.lost}`;
}
