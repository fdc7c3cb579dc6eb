// Re-renders a saved report: merges the results of several latest.json files (e.g. a part
// repeated with BENCH_PARTS) into the first, re-evaluates the targets, rewrites its SVG and
// prints the table. Usage: tsx tooling/bench/render.ts <into.json> [<from.json>...]
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { renderChart } from './chart';
import type { BenchReport } from './report';
import { renderReport } from './table';
import { evaluateTargets } from './targets';

/** Appends every result of `from` to `into` (the first report keeps its run metadata). */
export function mergeReports(into: BenchReport, from: BenchReport[]): BenchReport {
  const merged: BenchReport = { ...into };
  for (const other of from) {
    merged.load = [...merged.load, ...other.load];
    merged.pull = [...merged.pull, ...other.pull];
    merged.scale = [...merged.scale, ...other.scale];
    merged.rawCas = [...merged.rawCas, ...other.rawCas];
    merged.appendBurst = [...(merged.appendBurst ?? []), ...(other.appendBurst ?? [])];
    merged.errors = [...merged.errors, ...other.errors];
  }
  merged.targets = evaluateTargets(merged);
  return merged;
}

async function main([into, ...from]: string[]): Promise<void> {
  if (!into) throw new Error('usage: render.ts <into.json> [<from.json>...]');
  const read = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as BenchReport;
  const report = mergeReports(await read(into), await Promise.all(from.map(read)));
  await writeFile(into, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(dirname(into), 'latest.svg'), renderChart(report));
  process.stdout.write(renderReport(report));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
});
