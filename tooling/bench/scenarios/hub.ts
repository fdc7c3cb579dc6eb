// One host, many agents, side by side on one store: N agents as N stdio server processes, and as N
// sessions of one `serve --listen` hub. Idle memory after one pull of a 50-file notebook,
// a burst of own-file commits, an append burst on one file, saturation with 1 and 64
// writers, and a new session's initialize → first pull answered.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HubComparison, HubSide, StoreKind, System } from '../report';
import { summarize } from '../stats';
import type { WriterPool } from '../writers/types';
import { runAppendBurst } from './append';
import { mustBeOk, pullAll, runBurst, runSaturation } from './load';

export interface HubConfig {
  sessions: number;
  seedFiles: number;
  idleMs: number;
  saturationWriters: number;
  saturationMs: number;
  newSessions: { stdio: number; hub: number };
}

/** Resident and proportional set size of one process, KiB, from /proc (0 when it is gone). */
async function memoryKiB(pid: number): Promise<{ rss: number; pss: number }> {
  const field = (text: string | undefined, name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text ?? '')?.[1] ?? 0);
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => undefined);
  return { rss: field(status, 'VmRSS'), pss: field(rollup, 'Pss') };
}

async function idleMemory(pool: WriterPool, config: HubConfig): Promise<HubSide['idle']> {
  const seeder = pool.writers[0]!;
  await mkdir(join(seeder.dir, 'seed'), { recursive: true });
  for (let i = 0; i < config.seedFiles; i++)
    await writeFile(join(seeder.dir, 'seed', `f${i}.md`), `# file ${i}\n\n${'text\n'.repeat(20)}`);
  mustBeOk(await seeder.commit('seed the notebook'), 'seed commit');
  await pullAll(pool, pool.writers.length);
  await new Promise((resolve) => setTimeout(resolve, config.idleMs));
  const pids = pool.pids?.() ?? [];
  const each = await Promise.all(pids.map(memoryKiB));
  const sum = (pick: (m: { rss: number; pss: number }) => number) =>
    each.reduce((total, m) => total + pick(m), 0) / 1024;
  return { rssMiB: sum((m) => m.rss), pssMiB: sum((m) => m.pss), processes: pids.length };
}

/** One side: a pool of `config.sessions` writers and how to time one new session. */
export async function measureSide(opts: {
  system: System;
  store: StoreKind;
  config: HubConfig;
  makePool: () => Promise<WriterPool>;
  newSessionMs: (pool: WriterPool) => Promise<number>;
  newSessions: number;
  reconnectMs?: (pool: WriterPool) => Promise<number>;
}): Promise<HubSide> {
  const { config, system, store } = opts;
  const pool = await opts.makePool();
  try {
    const idle = await idleMemory(pool, config);
    const burst = await runBurst(
      { system, store, pool, sequence: [] },
      { writers: config.sessions },
    );
    const append = await runAppendBurst({ system, store, pool }, { writers: config.sessions });
    const rate = async (writers: number) =>
      (
        await runSaturation(
          {
            system,
            store,
            pool: { ...pool, writers: pool.writers.slice(0, writers) },
            sequence: [],
          },
          { writers, durationMs: config.saturationMs },
        )
      ).metrics.commitsPerSecond;
    const one = await rate(1);
    const many = await rate(config.saturationWriters);
    const samples: number[] = [];
    for (let i = 0; i < opts.newSessions; i++) samples.push(await opts.newSessionMs(pool));
    const reconnects: number[] = [];
    if (opts.reconnectMs)
      for (let i = 0; i < opts.newSessions; i++) reconnects.push(await opts.reconnectMs(pool));
    const reconnect = summarize(reconnects);
    return {
      system,
      sessions: config.sessions,
      idle,
      burst,
      append,
      saturation: { writers: config.saturationWriters, one, many },
      newSession: summarize(samples)!,
      ...(reconnect === undefined ? {} : { reconnect }),
    };
  } finally {
    await pool.close();
  }
}

const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);

/** Rows of the side-by-side table: metric, store, stdio fleet, hub, the target. */
export function hubRows(comparisons: readonly HubComparison[]): string[][] {
  const rows: string[][] = [];
  for (const { store, stdio, hub } of comparisons) {
    const n = hub.sessions;
    const row = (metric: string, a: string, b: string, target: string) =>
      rows.push([metric, store, a, b, target]);
    row(
      'idle memory, total MiB (RSS / PSS)',
      stdio === undefined
        ? '-'
        : `${fixed(stdio.idle.rssMiB)} / ${fixed(stdio.idle.pssMiB)} (${stdio.idle.processes} proc)`,
      `${fixed(hub.idle.rssMiB)} / ${fixed(hub.idle.pssMiB)} (${hub.idle.processes} proc)`,
      `hub RSS ≤ 200; ≥ 8× below fleet PSS (${fixed(stdio && stdio.idle.pssMiB / hub.idle.rssMiB, 1)}×)`,
    );
    const burst = (side: HubSide | undefined) =>
      side === undefined
        ? '-'
        : `${side.burst.metrics.accepted}/${side.burst.metrics.attempted} p50 ${fixed(side.burst.metrics.latency?.p50)} p99 ${fixed(side.burst.metrics.latency?.p99)} ms`;
    row(
      `burst of ${n} own-file commits`,
      burst(stdio),
      burst(hub),
      `p99 ≤ ${store === 's3' ? 3000 : 2000} ms`,
    );
    const append = (side: HubSide | undefined) =>
      side === undefined
        ? '-'
        : `${side.append.accepted}/${side.append.writers}, ${side.append.conflicts} conflicts, ${side.append.commitCalls} calls`;
    row(`append burst of ${n}`, append(stdio), append(hub), `0 conflicts, ${n} calls`);
    const saturation = (side: HubSide | undefined) =>
      side === undefined
        ? '-'
        : `${fixed(side.saturation.one, 1)} → ${fixed(side.saturation.many, 1)} (${fixed(side.saturation.many / side.saturation.one, 2)}×)`;
    row(
      `saturation commits/s, 1 → ${hub.saturation.writers} writers`,
      saturation(stdio),
      saturation(hub),
      '≥ 1.5×',
    );
    row(
      'new session: initialize → first pull, p50 ms',
      stdio === undefined ? '-' : `${fixed(stdio.newSession.p50)} (spawn included)`,
      fixed(hub.newSession.p50),
      '≤ 50',
    );
    row(
      'reconnecting agent: initialize → first pull, p50 ms',
      '-',
      fixed(hub.reconnect?.p50),
      '≤ 50',
    );
  }
  return rows;
}
