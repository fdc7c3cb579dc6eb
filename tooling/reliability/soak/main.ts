/**
 * `pnpm soak` (tooling/soak.sh): the full soak, 20 writers × 200 commits by default, on the
 * embedded store and on the real S3 server, printing the totals line per store; then the
 * random-kill soak (real servers SIGKILLed at random, S3 behind the fault proxy); then the
 * whole crash matrix (every failpoint × commit and pull). Sizes: SLIVINGDOC_SOAK_WRITERS,
 * SLIVINGDOC_SOAK_COMMITS; SLIVINGDOC_SOAK_STORES=embedded,s3; SLIVINGDOC_SOAK_CRASH=0 skips
 * the matrix. Random-kill soak: SLIVINGDOC_KILL_SOAK_STORES=embedded,s3 (empty: skip),
 * SLIVINGDOC_KILL_SOAK_WRITERS (6), SLIVINGDOC_KILL_SOAK_COMMITS (3000 on embedded; S3 runs
 * half), SLIVINGDOC_KILL_SOAK_KILLS (170 on embedded; S3 in proportion),
 * SLIVINGDOC_KILL_SOAK_SEED (1), SLIVINGDOC_KILL_SOAK_FAULT_RATE (0.05).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAILPOINT } from '@slivingdoc/engine';
import { s3TestEnv } from '@slivingdoc/testkit/s3-env';
import { requireBuiltCli } from '../cli';
import { runCrashCase } from '../crash/matrix';
import type { StoreSpec } from '../store-spec';
import { formatSoakTotals } from './checker';
import { runSoak } from './driver';
import { formatKillSoak, killSoakProblems, runKillSoak } from './kill-soak';
import { soakProblems } from './verdict';

const writers = Number(process.env.SLIVINGDOC_SOAK_WRITERS ?? 20);
const commits = Number(process.env.SLIVINGDOC_SOAK_COMMITS ?? 200);
const stores = (process.env.SLIVINGDOC_SOAK_STORES ?? 'embedded,s3').split(',').filter(Boolean);

let failed = false;
for (const kind of stores) {
  const spec: StoreSpec =
    kind === 's3'
      ? { kind: 's3', prefix: 'soak', ...s3TestEnv() }
      : {
          kind: 'embedded',
          prefix: 'soak',
          dir: await mkdtemp(join(tmpdir(), 'slivingdoc-soak-store-')),
        };
  const started = Date.now();
  const report = await runSoak({ writers, commits, store: spec });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(
    `${formatSoakTotals(kind, report)} (manifest generation ${report.manifestGeneration}, ${seconds} s)`,
  );
  const problems = soakProblems(report, writers * commits);
  for (const p of problems) console.log(`  FAIL ${p}`);
  failed ||= problems.length > 0;
}
const killStores = (process.env.SLIVINGDOC_KILL_SOAK_STORES ?? 'embedded,s3')
  .split(',')
  .filter(Boolean);
const killCommits = Number(process.env.SLIVINGDOC_KILL_SOAK_COMMITS ?? 3000);
const killKills = Number(process.env.SLIVINGDOC_KILL_SOAK_KILLS ?? 170);
for (const kind of killStores) {
  // S3 round trips make each commit several times slower: half the commits, kills in proportion.
  const share = kind === 's3' ? 0.5 : 1;
  const started = Date.now();
  const report = await runKillSoak({
    writers: Number(process.env.SLIVINGDOC_KILL_SOAK_WRITERS ?? 6),
    commits: Math.round(killCommits * share),
    kills: Math.round(killKills * share),
    seed: Number(process.env.SLIVINGDOC_KILL_SOAK_SEED ?? 1),
    store:
      kind === 's3'
        ? {
            kind: 's3',
            s3: s3TestEnv(),
            faultRate: Number(process.env.SLIVINGDOC_KILL_SOAK_FAULT_RATE ?? 0.05),
          }
        : { kind: 'embedded' },
    checkpointPacks: 1024,
    onProgress: (line) => console.log(`kill soak ${kind} at ${new Date().toISOString()}: ${line}`),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  console.log(`kill soak ${formatKillSoak(kind, report)} (${seconds} s)`);
  const problems = killSoakProblems(report);
  for (const p of problems) console.log(`  FAIL ${p}`);
  failed ||= problems.length > 0;
}
if (process.env.SLIVINGDOC_SOAK_CRASH !== '0') {
  await requireBuiltCli();
  for (const failpoint of Object.values(FAILPOINT)) {
    for (const operation of ['commit', 'pull'] as const) {
      const r = await runCrashCase(failpoint, operation);
      const verdict = !r.killed ? 'not on this path' : r.problems.length === 0 ? 'ok' : 'FAIL';
      console.log(
        `crash ${operation} at ${failpoint}: ${verdict}; repair: ${r.repair.replace(/\/\S+/g, '<dir>')}`,
      );
      for (const p of r.problems) console.log(`  FAIL ${p}`);
      failed ||= r.problems.length > 0;
    }
  }
}
process.exitCode = failed ? 1 : 0;
