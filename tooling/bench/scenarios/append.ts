// The append burst: N writers each append one line to the same file and commit at
// the same instant, resolving any conflict as an agent would (drop the markers, keep both
// sides, commit again). Measures what concurrent additions cost: conflicts and commit calls.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppendBurstResult, StoreKind, System } from '../report';
import { summarize } from '../stats';
import type { Outcome, Writer, WriterPool } from '../writers/types';
import { mustBeOk, pullAll } from './load';

const MARKER_LINE = /^(<<<<<<< local|=======|>>>>>>> remote)\r?$/;
/** Rounds of resolve-and-commit one writer may take before the run counts it as failed. */
const MAX_ROUNDS = 12;
/** Retryable answers a writer simply commits again after (contract §3). */
const RETRYABLE = new Set(['REMOTE_BUSY', 'PATH_BUSY', 'STORAGE_FAILURE']);

/**
 * What an agent does with a conflict between two additions: deletes the three marker lines of
 * every block and keeps both sides' lines (local, then remote, as written).
 */
export function resolveKeepingBoth(text: string): string {
  return text
    .split('\n')
    .filter((line) => !MARKER_LINE.test(line))
    .join('\n');
}

/** The line writer `index` appends. */
export function appendedLine(index: number): string {
  return `- finding of writer ${index}`;
}

/**
 * Whether `text` is the header followed by exactly the lines of writers 0…writers-1 (any
 * order), each once, and no marker line.
 */
export function everyLineOnce(text: string, header: string, writers: number): boolean {
  if (!text.startsWith(header)) return false;
  const body = text
    .slice(header.length)
    .split('\n')
    .filter((line) => line !== '');
  const expected = Array.from({ length: writers }, (_, index) => appendedLine(index));
  return (
    body.length === expected.length &&
    [...body].sort().join('\n') === [...expected].sort().join('\n')
  );
}

interface Landing {
  calls: number;
  conflicts: number;
  /** Retryable answers committed again after, by code. */
  retried: Record<string, number>;
  /** The final answer (OK, or the failure that stopped this writer). */
  last: Outcome;
  /** From the burst's start to the final answer. */
  ms: number;
}

/** Commits until OK, resolving a conflict by keeping both sides; counts every call. */
async function land(writer: Writer, file: string, index: number, start: number): Promise<Landing> {
  const landing: Landing = {
    calls: 0,
    conflicts: 0,
    retried: {},
    last: { code: 'NOT_RUN', ms: 0 },
    ms: 0,
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    landing.calls++;
    try {
      landing.last = await writer.commit(`append ${index}`);
    } catch (error) {
      landing.last = { code: 'DRIVER_ERROR', reason: (error as Error).message.slice(0, 80), ms: 0 };
    }
    if (landing.last.code === 'CONTENT_CONFLICT') {
      landing.conflicts++;
      const path = join(writer.dir, file);
      await writeFile(path, resolveKeepingBoth(await readFile(path, 'utf8')));
    } else if (RETRYABLE.has(landing.last.code)) {
      landing.retried[landing.last.code] = (landing.retried[landing.last.code] ?? 0) + 1;
    } else break;
  }
  landing.ms = performance.now() - start;
  return landing;
}

export interface AppendRun {
  system: System;
  store: StoreKind;
  pool: WriterPool;
}

/**
 * One burst of `writers` (the pool's first ones) on a file of its own: writer 0 creates it,
 * every writer pulls and appends its line, all commit at once, and a final pull checks that
 * every line is there once.
 */
export async function runAppendBurst(
  run: AppendRun,
  opts: { writers: number },
): Promise<AppendBurstResult> {
  const writers = run.pool.writers.slice(0, opts.writers);
  const first = writers[0];
  if (first === undefined) throw new Error('an append burst needs at least one writer');
  const file = `append-burst-${opts.writers}.md`;
  const header = `# append burst of ${opts.writers}\n`;
  mustBeOk(await first.pull(), 'pull before seeding');
  await writeFile(join(first.dir, file), header);
  mustBeOk(await first.commit(`seed ${file}`), 'seed commit');
  await pullAll(run.pool, opts.writers);
  for (const [index, writer] of writers.entries()) {
    const path = join(writer.dir, file);
    await writeFile(path, `${await readFile(path, 'utf8')}${appendedLine(index)}\n`);
  }
  const start = performance.now();
  const landings = await Promise.all(
    writers.map((writer, index) => land(writer, file, index, start)),
  );
  const durationMs = performance.now() - start;
  mustBeOk(await first.pull(), 'pull after the burst');
  const text = await readFile(join(first.dir, file), 'utf8');
  const failures: Record<string, number> = {};
  for (const { last } of landings) {
    if (last.code === 'OK') continue;
    const key = last.reason ? `${last.code}·${last.reason}` : last.code;
    failures[key] = (failures[key] ?? 0) + 1;
  }
  const retried: Record<string, number> = {};
  for (const landing of landings)
    for (const [code, count] of Object.entries(landing.retried))
      retried[code] = (retried[code] ?? 0) + count;
  const accepted = landings.filter((l) => l.last.code === 'OK');
  const result: AppendBurstResult = {
    scenario: 'append-burst',
    system: run.system,
    store: run.store,
    writers: opts.writers,
    accepted: accepted.length,
    conflicts: landings.reduce((sum, l) => sum + l.conflicts, 0),
    commitCalls: landings.reduce((sum, l) => sum + l.calls, 0),
    retried,
    failures,
    everyLineOnce: everyLineOnce(text, header, opts.writers),
    durationMs,
  };
  const latency = summarize(accepted.map((l) => l.ms));
  if (latency) result.latency = latency;
  return result;
}
