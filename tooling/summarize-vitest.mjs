#!/usr/bin/env node
// Prints the one closing line CI reads: "N passed, N failed, N skipped", totalling the static
// checks (argv[2] passed, argv[3] failed) and every vitest JSON report named after them (one
// per Node stage). A suite file that failed to load counts as one failure; so does a report
// that is missing, unreadable or ran no test.
import { readFileSync } from 'node:fs';

const [checksPassed = '0', checksFailed = '0', ...files] = process.argv.slice(2);
let passed = Number(checksPassed);
let failed = Number(checksFailed);
let skipped = 0;
if (files.length === 0) failed += 1;
for (const file of files) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    failed += 1;
    continue;
  }
  const brokenSuites = report.testResults.filter(
    (suite) => suite.status === 'failed' && suite.assertionResults.length === 0,
  ).length;
  passed += report.numPassedTests;
  failed += report.numFailedTests + brokenSuites + (report.numPassedTests === 0 ? 1 : 0);
  skipped += report.numPendingTests + report.numTodoTests;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
