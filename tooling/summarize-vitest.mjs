#!/usr/bin/env node
// Prints the one closing line CI reads: "N passed, N failed, N skipped", totalling every
// project of the vitest run plus the static checks (argv[3] passed, argv[4] failed).
// A suite file that failed to load counts as one failure.
import { readFileSync } from 'node:fs';

const [file, checksPassed = '0', checksFailed = '0'] = process.argv.slice(2);
let report = {
  testResults: [],
  numPassedTests: 0,
  numFailedTests: 0,
  numPendingTests: 0,
  numTodoTests: 0,
};
let unreadable = 0;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  unreadable = 1;
}
const brokenSuites = report.testResults.filter(
  (suite) => suite.status === 'failed' && suite.assertionResults.length === 0,
).length;
const passed = report.numPassedTests + Number(checksPassed);
const failed = report.numFailedTests + brokenSuites + unreadable + Number(checksFailed);
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || report.numPassedTests === 0 ? 1 : 0);
