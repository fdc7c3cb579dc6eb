// The product drivers on tiny sizes: real `slivingdoc serve` processes over MCP stdio (the
// built bin: `pnpm build` first, as tooling/test-all.sh does), the in-process engine, and the
// embedded store's raw compare-and-swap — all on a real embedded store in a temp directory.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { measureRawCas } from '../bench/raw-cas';
import { noteContent, runBurst } from '../bench/scenarios/load';
import { embeddedTarget } from '../bench/stores';
import { createEnginePool } from '../bench/writers/engine';
import { createHubPool } from '../bench/writers/hub';
import { createMcpPool } from '../bench/writers/mcp';
import type { WriterPool } from '../bench/writers/types';
import { repoRoot } from '../vitest-shared.ts';

const cli = join(repoRoot, 'apps/slivingdoc/dist/cli.js');
const roots: string[] = [];
const pools: WriterPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'bench-drivers-'));
  roots.push(root);
  return root;
}

/** Both writers' notes must be in a third writer's copy after its pull. */
async function expectBothNotesShared(pool: WriterPool): Promise<void> {
  const reader = pool.writers[2]!;
  expect((await reader.pull()).code).toBe('OK');
  for (const i of [0, 1]) {
    expect(readFileSync(join(reader.dir, 'notes', `w${i}.md`), 'utf8')).toBe(noteContent(i, 1));
  }
}

describe('bench drivers', { timeout: 180_000 }, () => {
  it('drives real slivingdoc serve processes over MCP stdio and counts their CAS attempts', async () => {
    expect(existsSync(cli), `${cli} missing: run pnpm build first`).toBe(true);
    const root = tempRoot();
    const target = embeddedTarget(join(root, 'store'));
    const pool = await createMcpPool({
      cli,
      target,
      prefix: 'drivers',
      root: join(root, 'writers'),
      count: 3,
      retries: 8,
      pullFirst: true,
    });
    pools.push(pool);
    const run = {
      system: 'slivingdoc-mcp' as const,
      store: 'embedded' as const,
      pool: { ...pool, writers: pool.writers.slice(0, 2) },
      sequence: [],
    };
    const { metrics } = await runBurst(run, { writers: 2 });
    expect(metrics).toMatchObject({ attempted: 2, accepted: 2, remoteBusy: 0, failed: 0 });
    // at least one conditional write of `current` per accepted commit, counted in the servers
    expect(metrics.casAttemptsPerCommit).toBeGreaterThanOrEqual(1);
    await expectBothNotesShared(pool);
  });

  it('drives sessions of one serve --listen hub over Streamable HTTP, one token each', async () => {
    const root = tempRoot();
    const pool = await createHubPool({
      cli,
      target: embeddedTarget(join(root, 'store')),
      prefix: 'drivers-hub',
      root: join(root, 'hub'),
      count: 3,
      retries: 8,
      pullFirst: true,
    });
    pools.push(pool);
    expect(pool.pids?.()).toEqual([pool.pid]);
    const run = {
      system: 'slivingdoc-hub' as const,
      store: 'embedded' as const,
      pool: { ...pool, writers: pool.writers.slice(0, 2) },
      sequence: [],
    };
    const { metrics } = await runBurst(run, { writers: 2 });
    expect(metrics).toMatchObject({ attempted: 2, accepted: 2, remoteBusy: 0, failed: 0 });
    expect(metrics.casAttemptsPerCommit).toBeGreaterThan(0);
    await expectBothNotesShared(pool);
    expect(await pool.newSessionMs()).toBeGreaterThan(0);
  });

  it('drives the in-process engine on the same kind of store', async () => {
    const root = tempRoot();
    const store = await embeddedTarget(join(root, 'store')).open('drivers');
    const pool = await createEnginePool({
      store,
      root: join(root, 'writers'),
      count: 3,
      retries: 8,
      pullFirst: true,
    });
    pools.push(pool);
    const run = {
      system: 'slivingdoc-engine' as const,
      store: 'embedded' as const,
      pool: { ...pool, writers: pool.writers.slice(0, 2) },
      sequence: [],
    };
    const { metrics } = await runBurst(run, { writers: 2 });
    expect(metrics).toMatchObject({ attempted: 2, accepted: 2, remoteBusy: 0, failed: 0 });
    expect(metrics.casAttemptsPerCommit).toBeGreaterThanOrEqual(1);
    await expectBothNotesShared(pool);
  });

  it('measures the raw compare-and-swap and counts lost races without failing', async () => {
    const root = tempRoot();
    const store = await embeddedTarget(join(root, 'store')).open('raw');
    const result = await measureRawCas({ store, kind: 'embedded', writers: 2, durationMs: 200 });
    expect(result.roundTrip.count).toBeGreaterThan(0);
    expect(result.casPerSecond).toBeGreaterThan(0);
    // every success replaced the previous version: the store holds the last one written
    const current = await store.get('current');
    expect(current).toBeDefined();
    expect(new TextDecoder().decode(current!.body)).toMatch(/^\{"writer":\d,"sequence":\d+\}/);
  });
});
