import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  noteContent,
  runBurst,
  runDistributed,
  runSaturation,
  writeNote,
} from '../bench/scenarios/load';
import { createGitPool, git } from '../bench/writers/git';
import type { Writer } from '../bench/writers/types';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-git-'));
  roots.push(root);
  return root;
}

async function originCommitCount(root: string): Promise<number> {
  const out = await git(root, join(root, 'home'), [
    '--git-dir',
    join(root, 'origin.git'),
    'rev-list',
    '--count',
    'main',
  ]);
  return Number(out.trim());
}

// Real git processes on a loaded 2-core machine: generous per-test time limits.
describe('git baseline', { timeout: 120_000 }, () => {
  it('writes about 1 KiB per note, different on every sequence', () => {
    expect(noteContent(3, 1).length).toBeGreaterThan(900);
    expect(noteContent(3, 1).length).toBeLessThanOrEqual(1024);
    expect(noteContent(3, 1)).not.toBe(noteContent(3, 2));
  });

  it('a burst lands every accepted commit in the bare repository and counts the push attempts', async () => {
    const root = tempRoot();
    const pool = await createGitPool({ root, count: 3, retries: 8 });
    const run = { system: 'git' as const, store: 'local-disk' as const, pool, sequence: [] };
    const { metrics } = await runBurst(run, { writers: 3 });
    expect(metrics.attempted).toBe(3);
    expect(metrics.accepted + metrics.remoteBusy + metrics.failed).toBe(3);
    expect(metrics.accepted).toBeGreaterThanOrEqual(1);
    expect(await originCommitCount(root)).toBe(1 + metrics.accepted);
    expect(metrics.casAttemptsPerCommit).toBeGreaterThanOrEqual(1);
    // the accepted writers' notes are in the shared history: a fresh pull sees them
    const reader = pool.writers[0]!;
    expect((await reader.pull()).code).toBe('OK');
    if (metrics.accepted === 3) {
      for (const i of [0, 1, 2]) {
        expect(readFileSync(join(reader.dir, 'notes', `w${i}.md`), 'utf8')).toBe(noteContent(i, 1));
      }
    }
  });

  it('gives up with REMOTE_BUSY once the retry bound is spent and keeps the local commit', async () => {
    const root = tempRoot();
    const pool = await createGitPool({ root, count: 2, retries: 0 });
    const [first, second] = pool.writers as [Writer, Writer];
    await writeNote(first, 0, 1);
    expect((await first.commit('first')).code).toBe('OK');
    await writeNote(second, 1, 1);
    // second is behind now; with no retry it may not rebase, so its push stays rejected
    expect(await second.commit('second')).toMatchObject({
      code: 'REMOTE_BUSY',
      reason: 'RETRIES_EXHAUSTED',
    });
    expect(await originCommitCount(root)).toBe(2);
    const local = await git(second.dir, join(root, 'home'), ['log', '-1', '--format=%s']);
    expect(local.trim()).toBe('second');
  });

  it('runs closed-loop saturation and a paced distributed load with every commit counted', async () => {
    const root = tempRoot();
    const pool = await createGitPool({ root, count: 2, retries: 8 });
    const run = { system: 'git' as const, store: 'local-disk' as const, pool, sequence: [] };
    const distributed = await runDistributed(run, {
      writers: 2,
      offeredPerSecond: 20,
      commitsPerWriter: 2,
    });
    expect(distributed.metrics.attempted).toBe(4);
    expect(distributed.metrics.offeredPerSecond).toBe(20);
    const saturation = await runSaturation(run, { writers: 2, durationMs: 300 });
    expect(saturation.metrics.attempted).toBeGreaterThanOrEqual(2);
    expect(await originCommitCount(root)).toBe(
      1 + distributed.metrics.accepted + saturation.metrics.accepted,
    );
    expect(saturation.metrics.latency?.count).toBe(saturation.metrics.accepted);
  });
});
