// Scenarios 4 (pull) and 5 (scale): one notebook of many 1 KiB files, seeded once per store and
// prefix, then pulled and committed by a single writer of each system.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectStore } from '@slivingdoc/store';
import type { PullResult, ScaleResult, StoreKind, System } from '../report';
import { summarize } from '../stats';
import { createEnginePool } from '../writers/engine';
import type { Outcome, Writer, WriterPool } from '../writers/types';
import { mustBeOk, noteContent } from './load';

/** The path of file `i` in a seeded notebook: 100 files per directory. */
export function seededPath(i: number): string {
  return `d${Math.floor(i / 100)}/n${i}.md`;
}

async function writeSeededFile(dir: string, i: number, sequence: number): Promise<void> {
  const path = join(dir, seededPath(i));
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, noteContent(i, sequence));
}

/**
 * Publishes a notebook of `files` files with one in-process commit: the first publication is a
 * closed checkpoint pack, so what later writers pull is a checkpointed notebook.
 */
export async function seedNotebook(
  store: ObjectStore,
  root: string,
  files: number,
): Promise<number> {
  const pool = await createEnginePool({
    store,
    root: await mkdtemp(join(root, 'seed-')),
    count: 1,
    retries: 8,
    pullFirst: true,
  });
  try {
    const writer = pool.writers[0]!;
    for (let i = 0; i < files; i++) await writeSeededFile(writer.dir, i, 0);
    return mustBeOk(await writer.commit(`seed ${files} files`), 'seeding the notebook').ms;
  } finally {
    await pool.close();
  }
}

/** Makes a pool of writers of one system on one store under a prefix. */
export type PoolFactory = (opts: {
  root: string;
  count: number;
  pullFirst: boolean;
}) => Promise<WriterPool>;

export interface NotebookRun {
  system: System;
  store: StoreKind;
  makePool: PoolFactory;
  root: string;
}

/** Changes seeded file `index` in the writer's copy and commits it. */
async function changeOne(writer: Writer, index: number, sequence: number): Promise<Outcome> {
  await writeSeededFile(writer.dir, index, sequence);
  return mustBeOk(await writer.commit(`change ${index}.${sequence}`), `commit of file ${index}`);
}

/**
 * Scenario 5: commit latency with one changed file. `fileIndex` keeps systems on different
 * files of the same notebook, so their commits never conflict.
 */
export async function runScale(
  run: NotebookRun,
  opts: { files: number; reps: number; fileIndex: number },
): Promise<ScaleResult> {
  const pool = await run.makePool({
    root: await mkdtemp(join(run.root, 'scale-')),
    count: 1,
    pullFirst: true,
  });
  try {
    const samples: number[] = [];
    for (let rep = 1; rep <= opts.reps; rep++) {
      samples.push((await changeOne(pool.writers[0]!, opts.fileIndex, rep)).ms);
    }
    return {
      scenario: 'scale',
      system: run.system,
      store: run.store,
      files: opts.files,
      latency: summarize(samples)!,
    };
  } finally {
    await pool.close();
  }
}

/**
 * Scenario 4: cold pull into an empty directory and private root (a fresh writer each time);
 * then, with two warm writers, one commits one changed file and the other pulls it (warm) and
 * pulls again with nothing new (no-op).
 */
export async function runPull(
  run: NotebookRun,
  opts: { files: number; coldReps: number; warmReps: number; fileIndex: number },
): Promise<PullResult> {
  const cold: number[] = [];
  for (let rep = 0; rep < opts.coldReps; rep++) {
    const pool = await run.makePool({
      root: await mkdtemp(join(run.root, 'cold-')),
      count: 1,
      pullFirst: false,
    });
    try {
      cold.push(mustBeOk(await pool.writers[0]!.pull(), 'cold pull').ms);
    } finally {
      await pool.close();
    }
  }
  const pool = await run.makePool({
    root: await mkdtemp(join(run.root, 'warm-')),
    count: 2,
    pullFirst: true,
  });
  try {
    const [reader, committer] = pool.writers as [Writer, Writer];
    const warm: number[] = [];
    const noop: number[] = [];
    for (let rep = 1; rep <= opts.warmReps; rep++) {
      await changeOne(committer, opts.fileIndex, rep);
      warm.push(mustBeOk(await reader.pull(), 'warm pull').ms);
      noop.push(mustBeOk(await reader.pull(), 'no-op pull').ms);
    }
    return {
      scenario: 'pull',
      system: run.system,
      store: run.store,
      files: opts.files,
      cold: summarize(cold)!,
      warm: summarize(warm)!,
      noop: summarize(noop)!,
    };
  } finally {
    await pool.close();
  }
}
