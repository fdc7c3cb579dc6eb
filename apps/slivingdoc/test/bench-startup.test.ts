import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from './helpers/bin';

// The start-up bench is not a test (nothing here asserts a figure); this only checks that
// it runs and prints every row, so `pnpm bench` keeps working.

beforeAll(assertBuilt);

describe('bench/startup.mjs', () => {
  it('runs and reports start-up beside bare node, idle memory and a burst peak', () => {
    const output = execFileSync(
      process.execPath,
      [join(import.meta.dirname, '../bench/startup.mjs')],
      {
        encoding: 'utf8',
        env: { ...process.env, BENCH_RUNS: '1', BENCH_BURST_WRITERS: '3', BENCH_IDLE_MS: '1000' },
        timeout: 300_000,
      },
    );
    for (const row of [
      'bare node -e 0 (wall, same run)',
      'serve: spawn → initialize response',
      'serve: resident memory idle, 1 s after that pull',
      'serve: private memory idle (Private_Dirty)',
    ])
      expect(output).toMatch(
        new RegExp(`${row.replace(/[()]/g, '\\$&')}\\s+(ms|MiB)\\s+\\d+\\.\\d`),
      );
    expect(output).toMatch(
      /burst of 3 writers \(one server\): .* peak \(VmHWM\) \d+\.\d MiB; outcomes \{"OK":3\}/,
    );
  }, 300_000);
});
