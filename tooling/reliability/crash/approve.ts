/**
 * The crash matrix's approve column: a person's real `slivingdoc proposals approve` is killed
 * with SIGKILL at each step of an approval, then fresh processes retry it and go on, and
 * docs/review.md's promises are checked from outside: the proposal is published exactly
 * once and never lost.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { FAILPOINT, FAILPOINTS_ENV, type FailpointName } from '@slivingdoc/engine';
import { cli, findStateFiles, firstLine, inProcess, newEnvironment } from './matrix';

/** The failpoints only an approval passes (every other one is on a commit's or pull's path). */
export const APPROVAL_ONLY_FAILPOINTS: readonly FailpointName[] = [
  FAILPOINT.approveAfterMark,
  FAILPOINT.approveAfterPublish,
];

/**
 * The failpoints on an approval's path, in order: reading R, marking the proposal, then the
 * publication queue's steps (the approval publishes as a commit's change does), then the
 * decision's record.
 */
export const APPROVE_FAILPOINTS: readonly FailpointName[] = [
  FAILPOINT.afterReadCurrent,
  FAILPOINT.approveAfterMark,
  FAILPOINT.afterPackUpload,
  FAILPOINT.afterCasSent,
  FAILPOINT.afterCasAnswered,
  FAILPOINT.approveAfterPublish,
];

/** The outcome of one case: whether the failpoint fired, and every broken promise. */
export interface ApproveCrashReport {
  failpoint: FailpointName;
  killed: boolean;
  problems: string[];
}

/**
 * Runs one case. Setup: review is `queue`; an agent's tool commit proposes `proposed.md`.
 * Then the person's approval runs with the failpoint armed to kill; a fresh process approves
 * again, the person commits once more, and the agent pulls.
 */
export async function runApproveCrashCase(failpoint: FailpointName): Promise<ApproveCrashReport> {
  const e = await newEnvironment();
  const agent = join(e.root, 'ws', 'agent');
  const person = join(e.root, 'ws', 'person');
  const problems: string[] = [];
  await mkdir(agent);
  await mkdir(person);
  await inProcess(e, agent, {});
  await inProcess(e, person, {});
  const set = await cli(e, ['review', 'set', 'queue']);
  if (set.code !== 0) problems.push(`review set queue answered ${firstLine(set)}`);
  await writeFile(join(agent, 'proposed.md'), 'from the agent\n');
  const pending = (await inProcess(e, agent, { commit: 'agent change', viaTools: true })) as
    | { proposalId?: string }
    | undefined;
  const id = pending?.proposalId;
  if (id === undefined) return { failpoint, killed: false, problems: ['no proposal was stored'] };

  const killedRun = await cli(e, ['proposals', 'approve', id, person], {
    [FAILPOINTS_ENV]: `${failpoint}=kill`,
  });
  const killed = killedRun.signal === 'SIGKILL';
  if (!killed) problems.push(`the approval was not killed: ${firstLine(killedRun)}`);

  // A fresh process approves again: it resumes the killed approval, never doubling it.
  const retry = await cli(e, ['proposals', 'approve', id, person, '--json']);
  if (retry.code !== 0) problems.push(`the retried approval answered ${firstLine(retry)}`);
  const shown = await cli(e, ['proposals', 'show', id, '--json']);
  const state = shown.code === 0 ? (JSON.parse(shown.stdout) as { state?: string }).state : '';
  if (state !== 'approved')
    problems.push(`the proposal is ${state || firstLine(shown)}, not approved`);

  for (const file of await findStateFiles(join(e.root, 'private'))) {
    if (/"recoveryRequired":\s*true/.test(await readFile(file, 'utf8')))
      problems.push(`recovery flag left in ${relative(e.root, file)}`);
  }
  const followUp = await cli(e, ['commit', person, '-m', 'after the approval']);
  if (followUp.code !== 0)
    problems.push(`the person's next commit answered ${firstLine(followUp)}`);

  // Exactly one publication carries the proposal, authored by the agent's actor.
  const log = await cli(e, ['log', person, '--full', '--json']);
  const publications =
    log.code === 0
      ? (JSON.parse(log.stdout) as { publications: { actor: string; message: string }[] })
          .publications
      : [];
  const carrying = publications.filter((p) => p.message.includes(`Proposal: ${id} `));
  if (carrying.length !== 1)
    problems.push(`${carrying.length} publications carry the proposal, not exactly one`);
  const agentPull = await cli(e, ['pull', agent]);
  if (agentPull.code !== 0) problems.push(`the agent's next pull answered ${firstLine(agentPull)}`);
  const published = await readFile(join(person, 'proposed.md'), 'utf8').catch(() => '');
  if (published !== 'from the agent\n') problems.push('the approved file is not in R as proposed');
  return { failpoint, killed, problems };
}
