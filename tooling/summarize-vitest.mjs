#!/usr/bin/env node
// Prints the one closing line CI reads: "N passed, N failed, N skipped", totalling every
// project of the vitest run. A suite file that failed to load counts as one failure.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const brokenSuites = report.testResults.filter(
  (suite) => suite.status === 'failed' && suite.assertionResults.length === 0,
).length;
const passed = report.numPassedTests;
const failed = report.numFailedTests + brokenSuites;
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
