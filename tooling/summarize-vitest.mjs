#!/usr/bin/env node
// Prints the one closing line CI reads: "N passed, N failed, N skipped", totalling the static
// checks (argv[2] passed, argv[3] failed) and every vitest JSON report named after them (one
// per Node stage). A suite file that failed to load counts as one failure; so does a report
// that is missing, unreadable or ran no test. Every failure is named just above that line,
// with the first lines of its error, because a CI log is often read from its tail only.
import { readFileSync } from 'node:fs';
import { basename, relative } from 'node:path';

const [checksPassed = '0', checksFailed = '0', ...files] = process.argv.slice(2);
const errorLinesShown = 6;
let passed = Number(checksPassed);
let failed = Number(checksFailed);
let skipped = 0;
const failures = [];
if (Number(checksFailed) > 0)
  failures.push(`${checksFailed} static check(s) failed: see "== check:" above`);
if (files.length === 0) {
  failed += 1;
  failures.push('no vitest report was named');
}

/** The first lines of an error, without terminal colours. */
const excerpt = (messages) =>
  messages
    .join('\n')
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, errorLinesShown)
    .map((line) => `    ${line}`);

for (const file of files) {
  const stage = basename(file, '.json');
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    failed += 1;
    failures.push(`${stage}: the report is missing or unreadable`);
    continue;
  }
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + report.numTodoTests;
  if (report.numPassedTests === 0) {
    failed += 1;
    failures.push(`${stage}: no test passed`);
  }
  for (const suite of report.testResults) {
    const suiteName = relative(process.cwd(), suite.name);
    if (suite.status === 'failed' && suite.assertionResults.length === 0) {
      failed += 1;
      failures.push(`${stage}: ${suiteName} failed to load`, ...excerpt([suite.message ?? '']));
    }
    for (const test of suite.assertionResults) {
      if (test.status !== 'failed') continue;
      failures.push(`${stage}: ${suiteName} > ${test.fullName}`, ...excerpt(test.failureMessages));
    }
  }
}
if (failures.length > 0) console.log(['== failures', ...failures].join('\n'));
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
