import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// tooling/summarize-vitest.mjs prints the closing line CI reads, and names every failure just
// above it, since a CI log is often read from its tail only.

const summarize = join(import.meta.dirname, '../summarize-vitest.mjs');
const work = mkdtempSync(join(tmpdir(), 'slivingdoc-summary-'));

interface TestResult {
  fullName: string;
  status: 'passed' | 'failed' | 'pending';
  failureMessages: string[];
}

const report = (
  name: string,
  suites: { file: string; message?: string; tests: TestResult[] }[],
) => {
  const tests = suites.flatMap((suite) => suite.tests);
  const count = (status: string) => tests.filter((test) => test.status === status).length;
  const path = join(work, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      numPassedTests: count('passed'),
      numFailedTests: count('failed'),
      numPendingTests: count('pending'),
      numTodoTests: 0,
      testResults: suites.map((suite) => ({
        name: join(work, suite.file),
        status:
          suite.tests.some((test) => test.status === 'failed') || suite.message
            ? 'failed'
            : 'passed',
        message: suite.message ?? '',
        assertionResults: suite.tests,
      })),
    }),
  );
  return path;
};

const run = (...args: string[]) => {
  const result = spawnSync(process.execPath, [summarize, ...args], { cwd: work, encoding: 'utf8' });
  return { code: result.status, lines: result.stdout.trimEnd().split('\n') };
};

const passing = (fullName: string): TestResult => ({
  fullName,
  status: 'passed',
  failureMessages: [],
});

describe('the closing summary', () => {
  it('totals the checks and every report, and prints only the line when all passed', () => {
    const node20 = report('node-20', [
      { file: 'a.test.ts', tests: [passing('a one'), passing('a two')] },
    ]);
    const node24 = report('node-24', [
      {
        file: 'b.test.ts',
        tests: [
          passing('b one'),
          { fullName: 'b skipped', status: 'pending', failureMessages: [] },
        ],
      },
    ]);
    expect(run('3', '0', node20, node24)).toEqual({
      code: 0,
      lines: ['6 passed, 0 failed, 1 skipped'],
    });
  });

  it('names each failed test with its file, stage and the first lines of its error, above the line', () => {
    const stage = report('node-24', [
      {
        file: 'c.test.ts',
        tests: [
          passing('c one'),
          {
            fullName: 'c group a race',
            status: 'failed',
            failureMessages: [
              '\u001b[31mAssertionError: expected 1 to be 2\u001b[39m\n\n    at one\n    at two',
            ],
          },
        ],
      },
    ]);
    const { code, lines } = run('3', '0', stage);
    expect(code).toBe(1);
    expect(lines).toEqual([
      '== failures',
      'node-24: c.test.ts > c group a race',
      '    AssertionError: expected 1 to be 2',
      '        at one',
      '        at two',
      '4 passed, 1 failed, 0 skipped',
    ]);
  });

  it('counts a suite that failed to load, a missing report, a report that ran nothing and failed checks', () => {
    const broken = report('node-20', [
      { file: 'd.test.ts', message: 'SyntaxError: Unexpected token', tests: [] },
      { file: 'e.test.ts', tests: [passing('e one')] },
    ]);
    const empty = report('empty', []);
    const { code, lines } = run('2', '1', broken, empty, join(work, 'absent.json'));
    expect(code).toBe(1);
    expect(lines).toEqual([
      '== failures',
      '1 static check(s) failed: see "== check:" above',
      'node-20: d.test.ts failed to load',
      '    SyntaxError: Unexpected token',
      'empty: no test passed',
      'absent: the report is missing or unreadable',
      '3 passed, 4 failed, 0 skipped',
    ]);
  });

  it('fails a run that named no report, even with every check passed', () => {
    expect(run('3', '0')).toEqual({
      code: 1,
      lines: ['== failures', 'no vitest report was named', '3 passed, 1 failed, 0 skipped'],
    });
  });
});
