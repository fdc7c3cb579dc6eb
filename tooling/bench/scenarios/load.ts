// Scenarios 1–3 (and their git baseline): the same load shapes for any pool of writers.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadMetrics, LoadResult, LoadScenario, StoreKind, System } from '../report';
import { ratePerSecond, summarize } from '../stats';
import type { Outcome, Writer, WriterPool } from '../writers/types';

/** About 1 KiB of text for writer `index`'s own file, different on every `sequence`. */
export function noteContent(index: number, sequence: number): string {
  const head = `# writer ${index}\n\nentry ${sequence}\n\n`;
  const line = `writer ${index} sequence ${sequence}: the quick brown fox jumps over the lazy dog\n`;
  let body = head;
  while (body.length + line.length <= 1024) body += line;
  return body;
}

/** Writes writer `index`'s own file (`notes/w<index>.md`) in its working copy. */
export async function writeNote(writer: Writer, index: number, sequence: number): Promise<void> {
  await mkdir(join(writer.dir, 'notes'), { recursive: true });
  await writeFile(join(writer.dir, 'notes', `w${index}.md`), noteContent(index, sequence));
}

/** `outcome` when it is OK; a set-up step that failed makes the figures meaningless. */
export function mustBeOk(outcome: Outcome, what: string): Outcome {
  if (outcome.code !== 'OK') throw new Error(`${what}: ${outcome.code}·${outcome.reason ?? ''}`);
  return outcome;
}

/** Pulls for writers 0…count-1, a few at a time (set-up, not measured). */
export async function pullAll(pool: WriterPool, count: number): Promise<void> {
  const PULLS_AT_ONCE = 8;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PULLS_AT_ONCE, count) }, async () => {
      for (let index = next++; index < count; index = next++) {
        mustBeOk(await pool.writers[index]!.pull(), `pull of writer ${index}`);
      }
    }),
  );
}

interface Tally {
  outcomes: Outcome[];
  start: number;
  end: number;
}

/** Turns what the writers returned into the scenario's metrics. */
export function metricsFrom(
  tally: Tally,
  writers: number,
  usage: Usage,
  offeredPerSecond?: number,
): LoadMetrics {
  const accepted = tally.outcomes.filter((o) => o.code === 'OK');
  const busy = tally.outcomes.filter((o) => o.code === 'REMOTE_BUSY').length;
  const failures: Record<string, number> = {};
  for (const o of tally.outcomes) {
    if (o.code === 'OK' || o.code === 'REMOTE_BUSY') continue;
    const key = o.reason ? `${o.code}·${o.reason}` : o.code;
    failures[key] = (failures[key] ?? 0) + 1;
  }
  const durationMs = tally.end - tally.start;
  const metrics: LoadMetrics = {
    writers,
    attempted: tally.outcomes.length,
    accepted: accepted.length,
    remoteBusy: busy,
    failed: tally.outcomes.length - accepted.length - busy,
    failures,
    commitsPerSecond: ratePerSecond(accepted.length, durationMs),
    durationMs,
  };
  if (offeredPerSecond !== undefined) metrics.offeredPerSecond = offeredPerSecond;
  if (usage.casAttempts !== undefined && accepted.length > 0) {
    metrics.casAttemptsPerCommit = usage.casAttempts / accepted.length;
  }
  if (usage.cpuMs !== undefined && accepted.length > 0) {
    metrics.cpuMsPerCommit = usage.cpuMs / accepted.length;
  }
  const latency = summarize(accepted.map((o) => o.ms));
  if (latency) metrics.latency = latency;
  return metrics;
}

export interface LoadRun {
  system: System;
  store: StoreKind;
  pool: WriterPool;
  /** Per-writer counter so every commit really changes the writer's file. */
  sequence: number[];
}

async function commitNote(run: LoadRun, index: number, label: string): Promise<Outcome> {
  const writer = run.pool.writers[index]!;
  run.sequence[index] = (run.sequence[index] ?? 0) + 1;
  await writeNote(writer, index, run.sequence[index]!);
  try {
    return await writer.commit(`${label} ${index}.${run.sequence[index]}`);
  } catch (error) {
    return { code: 'DRIVER_ERROR', reason: (error as Error).message.slice(0, 80), ms: 0 };
  }
}

/** The pool's counters at one moment: CAS attempts and server CPU. */
interface Usage {
  casAttempts: number | undefined;
  cpuMs: number | undefined;
}

async function usageOf(pool: WriterPool): Promise<Usage> {
  return { casAttempts: await pool.casAttempts(), cpuMs: await pool.cpuMs?.() };
}

/** What the pool used since `before`. */
async function usageSince(pool: WriterPool, before: Usage): Promise<Usage> {
  const after = await usageOf(pool);
  const delta = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? undefined : a - b;
  return {
    casAttempts: delta(after.casAttempts, before.casAttempts),
    cpuMs: delta(after.cpuMs, before.cpuMs),
  };
}

function result(run: LoadRun, scenario: LoadScenario, metrics: LoadMetrics): LoadResult {
  return { scenario, system: run.system, store: run.store, metrics };
}

/**
 * Scenario 1: every writer commits its own file at an even cadence; writer i's slots are
 * `i·period/writers + k·period`, so the offered load is `writers / period` commits/s. A writer
 * that falls behind commits at once (it never overlaps itself).
 */
export async function runDistributed(
  run: LoadRun,
  opts: { writers: number; offeredPerSecond: number; commitsPerWriter: number },
): Promise<LoadResult> {
  const periodMs = (opts.writers / opts.offeredPerSecond) * 1000;
  const before = await usageOf(run.pool);
  const outcomes: Outcome[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: opts.writers }, async (_, index) => {
      for (let k = 0; k < opts.commitsPerWriter; k++) {
        const slot = start + (index * periodMs) / opts.writers + k * periodMs;
        const wait = slot - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        outcomes.push(await commitNote(run, index, 'distributed'));
      }
    }),
  );
  const metrics = metricsFrom(
    { outcomes, start, end: performance.now() },
    opts.writers,
    await usageSince(run.pool, before),
    opts.offeredPerSecond,
  );
  return result(run, 'distributed', metrics);
}

/**
 * Scenario 2: as the server's instructions tell every writer (pull, edit, commit), each writer
 * pulls and changes its file first; then all commit at the same instant. The commits then
 * contend with each other only, not with a catch-up on what earlier scenarios published.
 */
export async function runBurst(run: LoadRun, opts: { writers: number }): Promise<LoadResult> {
  const indexes = Array.from({ length: opts.writers }, (_, i) => i);
  await pullAll(run.pool, opts.writers);
  for (const index of indexes) {
    run.sequence[index] = (run.sequence[index] ?? 0) + 1;
    await writeNote(run.pool.writers[index]!, index, run.sequence[index]!);
  }
  const before = await usageOf(run.pool);
  const start = performance.now();
  const outcomes = await Promise.all(
    indexes.map(async (index): Promise<Outcome> => {
      try {
        return await run.pool.writers[index]!.commit(`burst ${index}`);
      } catch (error) {
        return { code: 'DRIVER_ERROR', reason: (error as Error).message.slice(0, 80), ms: 0 };
      }
    }),
  );
  const metrics = metricsFrom(
    { outcomes, start, end: performance.now() },
    opts.writers,
    await usageSince(run.pool, before),
  );
  return result(run, 'burst', metrics);
}

/**
 * Scenario 3: a closed loop of `writers` committing as fast as they can for `durationMs`; a
 * commit started before the deadline is waited for and counted, and every writer commits at
 * least once. Every writer pulls first (not
 * timed), so the window measures the loop's ceiling, not a catch-up on earlier scenarios.
 */
export async function runSaturation(
  run: LoadRun,
  opts: { writers: number; durationMs: number },
): Promise<LoadResult> {
  await pullAll(run.pool, opts.writers);
  const before = await usageOf(run.pool);
  const outcomes: Outcome[] = [];
  const start = performance.now();
  const deadline = start + opts.durationMs;
  await Promise.all(
    Array.from({ length: opts.writers }, async (_, index) => {
      // At least one commit each, however late a writer starts on a loaded machine.
      do {
        outcomes.push(await commitNote(run, index, 'saturation'));
      } while (performance.now() < deadline);
    }),
  );
  const metrics = metricsFrom(
    { outcomes, start, end: performance.now() },
    opts.writers,
    await usageSince(run.pool, before),
  );
  return result(run, 'saturation', metrics);
}
