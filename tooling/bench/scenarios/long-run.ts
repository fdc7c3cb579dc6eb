// The long run: one real `slivingdoc serve` (stdio, MCP SDK client) commits in a row,
// each commit appending a line to one of 50 files; a second server commits to the same store
// every 10th round, so commits also import foreign increments. Per window of commits: commit
// latency, the first server's resident memory and CPU time per commit, and the files and bytes
// of its private state P.
// A fresh directory's cold pull is timed after the first and after the last window.
import { appendFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LongRunResult, LongRunWindow, StoreKind } from '../report';
import { median, percentile } from '../stats';
import type { Writer, WriterPool } from '../writers/types';
import { mustBeOk } from './load';

const FILES = 50;
/** The second server commits every this many rounds. */
const FOREIGN_EVERY = 10;
/** Cold pulls of a fresh directory per measurement. */
const PULL_REPS = 3;

export interface LongRunOptions {
  store: StoreKind;
  commits: number;
  window: number;
  /** The servers' `--checkpoint-packs` (`null`: the product default), reported with the run. */
  checkpointPacks: number | null;
  /** Two writers: [0] is measured, [1] commits every 10th round. */
  pool: WriterPool;
  /** The first writer's private root (P's parent). */
  privateRoot: string;
  /** Starts a server on a fresh directory of the same store, not yet pulled. */
  freshWriter: () => Promise<Writer>;
  onWindow?: (window: LongRunWindow) => void;
}

/** Files and bytes below `dir`. */
async function filesAndBytes(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += (await stat(join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size;
  }
  return { files, bytes };
}

/** The median cold pull of a fresh directory (a new server each time). */
async function freshPullMs(freshWriter: () => Promise<Writer>): Promise<number> {
  const samples: number[] = [];
  for (let rep = 0; rep < PULL_REPS; rep += 1) {
    const writer = await freshWriter();
    try {
      samples.push(mustBeOk(await writer.pull(), 'fresh pull').ms);
    } finally {
      await writer.close();
    }
  }
  return median(samples);
}

export async function runLongRun(opts: LongRunOptions): Promise<LongRunResult> {
  const [measured, foreign] = opts.pool.writers as [Writer, Writer];
  const windows: LongRunWindow[] = [];
  let pullAfterFirst: number | undefined;
  let latencies: number[] = [];
  let cpuAtStart = await measured.cpuMs?.();
  for (let round = 0; round < opts.commits; round += 1) {
    await appendFile(join(measured.dir, `f${round % FILES}.md`), `line ${round}\n`);
    latencies.push(mustBeOk(await measured.commit(`long run ${round}`), 'long-run commit').ms);
    if (round % FOREIGN_EVERY === FOREIGN_EVERY - 1) {
      await appendFile(join(foreign.dir, `g${round % FILES}.md`), `foreign ${round}\n`);
      mustBeOk(await foreign.commit(`foreign ${round}`), 'foreign commit');
    }
    if ((round + 1) % opts.window !== 0 && round + 1 !== opts.commits) continue;
    const sorted = [...latencies].sort((a, b) => a - b);
    const p = await filesAndBytes(opts.privateRoot);
    const cpuNow = await measured.cpuMs?.();
    const window: LongRunWindow = {
      from: round + 2 - latencies.length,
      to: round + 1,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      rssBytes: (await measured.rssBytes?.()) ?? null,
      cpuMsPerCommit:
        cpuNow === undefined || cpuAtStart === undefined
          ? null
          : (cpuNow - cpuAtStart) / latencies.length,
      privateFiles: p.files,
      privateBytes: p.bytes,
    };
    windows.push(window);
    opts.onWindow?.(window);
    latencies = [];
    cpuAtStart = cpuNow;
    if (windows.length === 1) pullAfterFirst = await freshPullMs(opts.freshWriter);
  }
  const pullAtEnd = await freshPullMs(opts.freshWriter);
  return {
    scenario: 'long-run',
    store: opts.store,
    commits: opts.commits,
    window: opts.window,
    checkpointPacks: opts.checkpointPacks,
    windows,
    freshPull: { afterFirstWindowMs: pullAfterFirst ?? pullAtEnd, atEndMs: pullAtEnd },
  };
}
