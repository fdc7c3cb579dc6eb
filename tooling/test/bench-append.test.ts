// The append-burst scenario: its pure parts, its targets and table rows, and one
// tiny burst of real `slivingdoc serve` processes (the built bin) on an embedded store, with
// additions kept and with git's rule, whose conflicts the scenario resolves as an agent would.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QUICK, selectedScenarios } from '../bench/config';
import type { AppendBurstResult, BenchReport } from '../bench/report';
import {
  appendedLine,
  everyLineOnce,
  resolveKeepingBoth,
  runAppendBurst,
} from '../bench/scenarios/append';
import { embeddedTarget } from '../bench/stores';
import { renderReport } from '../bench/table';
import { evaluateTargets } from '../bench/targets';
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

describe('append burst: resolving and checking', () => {
  it('drops the marker lines of every block and keeps both sides, LF or CRLF', () => {
    expect(resolveKeepingBoth('# h\n<<<<<<< local\n- a\n=======\n- b\n- c\n>>>>>>> remote\n')).toBe(
      '# h\n- a\n- b\n- c\n',
    );
    expect(resolveKeepingBoth('<<<<<<< local\r\nx\r\n=======\r\ny\r\n>>>>>>> remote\r\n')).toBe(
      'x\r\ny\r\n',
    );
    expect(resolveKeepingBoth('no markers\n')).toBe('no markers\n');
  });

  it('every line once: the header, then each writer’s line exactly once in any order', () => {
    const header = '# h\n';
    const lines = [2, 0, 1].map((n) => `${appendedLine(n)}\n`).join('');
    expect(everyLineOnce(header + lines, header, 3)).toBe(true);
    expect(everyLineOnce(header + lines + `${appendedLine(1)}\n`, header, 3)).toBe(false);
    expect(everyLineOnce(`${header}${appendedLine(0)}\n`, header, 2)).toBe(false);
    expect(everyLineOnce(`${header}<<<<<<< local\n${lines}`, header, 3)).toBe(false);
    expect(everyLineOnce(lines, header, 3)).toBe(false);
  });

  it('BENCH_SCENARIOS selects scenario groups and refuses unknown ones; quick mode stays small', () => {
    expect([...selectedScenarios({})]).toEqual([
      'raw-cas',
      'load',
      'notebook',
      'append-burst',
      'long-run',
      'hub',
    ]);
    expect([...selectedScenarios({ BENCH_SCENARIOS: 'append-burst' })]).toEqual(['append-burst']);
    expect(() => selectedScenarios({ BENCH_SCENARIOS: 'append' })).toThrow(/unknown scenario/);
    expect(Math.max(...QUICK.appendBurst.writers)).toBeLessThanOrEqual(4);
  });
});

describe('append burst: targets and table', () => {
  const row = (writers: number, extra: Partial<AppendBurstResult> = {}): AppendBurstResult => ({
    scenario: 'append-burst',
    system: 'slivingdoc-mcp',
    store: 'embedded',
    writers,
    accepted: writers,
    conflicts: 0,
    commitCalls: writers,
    retried: {},
    failures: {},
    everyLineOnce: true,
    durationMs: 1234.5,
    latency: { count: writers, min: 1, p50: 50, p90: 90, p99: 99, max: 100, mean: 55 },
    ...extra,
  });
  const measured = (appendBurst: AppendBurstResult[]) => ({
    load: [],
    pull: [],
    scale: [],
    rawCas: [],
    appendBurst,
  });

  it('judges the largest burst per store: 0 conflicts, N commit calls, every line once', () => {
    const targets = Object.fromEntries(
      evaluateTargets(
        measured([row(8), row(100, { conflicts: 2, commitCalls: 102, everyLineOnce: false })]),
      ).map((t) => [t.id, t]),
    );
    expect(targets['append-conflicts-embedded']).toMatchObject({ value: 2, met: false });
    expect(targets['append-calls-embedded']).toMatchObject({ value: 102, threshold: 100 });
    expect(targets['append-calls-embedded']?.met).toBe(false);
    expect(targets['append-lines-embedded']).toMatchObject({ value: 0, met: false });
    expect(targets['append-conflicts-s3']).toMatchObject({ value: undefined, met: undefined });
    const good = evaluateTargets(measured([row(100)])).filter((t) => t.id.endsWith('-embedded'));
    expect(good.filter((t) => t.id.startsWith('append-')).map((t) => t.met)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('prints one row per burst', () => {
    const report: BenchReport = {
      version: 1,
      mode: 'quick',
      complete: true,
      startedAt: '',
      finishedAt: '',
      machine: { cpus: 2, cpuModel: 'cpu', memoryGiB: 4, node: 'v20', git: 'git' },
      ...measured([row(8, { conflicts: 1, commitCalls: 10, retried: { REMOTE_BUSY: 1 } })]),
      targets: [],
      errors: [],
    };
    expect(renderReport(report)).toMatch(
      /append burst {2}mcp · embedded {2}8 +8\/8 +1 +10 +REMOTE_BUSY 1 +1235 +50 +99 +yes/,
    );
  });
});

describe('append burst: real server processes', { timeout: 240_000 }, () => {
  const burst = async (extraArgs: string[]) => {
    expect(existsSync(cli), `${cli} missing: run pnpm build first`).toBe(true);
    const root = mkdtempSync(join(tmpdir(), 'bench-append-'));
    roots.push(root);
    const pool = await createMcpPool({
      cli,
      target: embeddedTarget(join(root, 'store')),
      prefix: 'append',
      root: join(root, 'writers'),
      count: 3,
      retries: 8,
      pullFirst: true,
      extraArgs,
    });
    pools.push(pool);
    return runAppendBurst({ system: 'slivingdoc-mcp', store: 'embedded', pool }, { writers: 3 });
  };

  it('kept additions: every line lands once with one commit call each', async () => {
    expect(await burst([])).toMatchObject({
      writers: 3,
      accepted: 3,
      conflicts: 0,
      commitCalls: 3,
      retried: {},
      failures: {},
      everyLineOnce: true,
    });
  });

  it('git’s rule: conflicts are resolved by keeping both sides and committing again', async () => {
    const result = await burst(['--merge-additions=conflict']);
    expect(result).toMatchObject({ writers: 3, accepted: 3, failures: {}, everyLineOnce: true });
    expect(result.conflicts).toBeGreaterThan(0);
    const retried = Object.values(result.retried).reduce((sum, n) => sum + n, 0);
    expect(result.commitCalls).toBe(3 + result.conflicts + retried);
  });
});
