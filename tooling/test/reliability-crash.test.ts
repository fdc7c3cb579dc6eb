import { FAILPOINT } from '@slivingdoc/engine';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from '../reliability/cli';
import {
  APPROVAL_ONLY_FAILPOINTS,
  APPROVE_FAILPOINTS,
  runApproveCrashCase,
} from '../reliability/crash/approve';
import {
  GROUP_FAILPOINTS,
  runGroupCrashCase,
  runMemberKilledAfterCas,
} from '../reliability/crash/group';
import { runCrashCase } from '../reliability/crash/matrix';

// The crash matrix (contract §10): for every engine failpoint a real `slivingdoc
// commit` is SIGKILLed exactly there; fresh processes then pull and commit. `current` must
// validate, every acknowledged line must be in R, the killed call's edit must survive, L
// must equal R, no recovery flag may be left and the lock must be free. `pnpm soak` also
// runs the pull column of the matrix.

beforeAll(() => requireBuiltCli());

const PULL_FIRST = new Set<string>([FAILPOINT.afterScan, FAILPOINT.afterMerge]);
const PULL_THEN_COMMIT = ['pull', 'commit'] as const;
const COMMIT_THEN_PULL = ['commit', 'pull'] as const;

describe('crash matrix: a call killed at every failpoint', () => {
  // Cases are independent (own store, P and L), so they run side by side.
  // An approval's own failpoints are on no commit's or pull's path: the approve column below.
  const onCallPaths = Object.values(FAILPOINT).filter((f) => !APPROVAL_ONLY_FAILPOINTS.includes(f));
  it.concurrent.each(onCallPaths)(
    'SIGKILL at %s, then fresh processes repair',
    async (failpoint) => {
      // A commit passes most failpoints; the engine announces the scan and merge boundaries
      // only on the pull/synchronise path. Try the likelier call first, then the other one.
      const [first, second] = PULL_FIRST.has(failpoint) ? PULL_THEN_COMMIT : COMMIT_THEN_PULL;
      let report = await runCrashCase(failpoint, first);
      if (!report.killed) report = await runCrashCase(failpoint, second);
      expect(report.killed, 'the process died at the failpoint').toBe(true);
      expect(report.problems).toEqual([]);
    },
    480_000,
  );
});

describe("crash matrix, approve: a person's approval killed at each step (docs/review.md)", () => {
  it.concurrent.each(APPROVE_FAILPOINTS)(
    'SIGKILL the approval at %s; a fresh approval publishes it exactly once and nothing is lost',
    async (failpoint) => {
      const report = await runApproveCrashCase(failpoint);
      expect(report.killed, 'the approval died at the failpoint').toBe(true);
      expect(report.problems).toEqual([]);
    },
    480_000,
  );
});

describe('crash matrix, group commit: the holder killed with members waiting', () => {
  // A member killed while it waits (queued, before the holder took it), with the holder then
  // killed before and after its CAS.
  const cases = [
    ...GROUP_FAILPOINTS.map((f) => [f, false] as const),
    [FAILPOINT.afterCasSent, true] as const,
  ];
  it.concurrent.each(cases)(
    'SIGKILL the holder at %s (a member killed while waiting: %s), then fresh processes repair',
    async (failpoint, killMember) => {
      const report = await runGroupCrashCase(failpoint, { killMember });
      expect(report.holderKilled, 'the holder died at the failpoint').toBe(true);
      expect(report.problems).toEqual([]);
    },
    480_000,
  );
});

describe('crash matrix, group commit: a member killed after the group published it', () => {
  it('SIGKILL a member between the CAS that carried its change and its rewrite of L; its next pull adds nothing twice', async () => {
    const report = await runMemberKilledAfterCas();
    expect(report.memberKilled, 'the member died after its verdict').toBe(true);
    expect(report.memberPublished, "the group's CAS carried the member's commit").toBe(true);
    expect(report.problems).toEqual([]);
  }, 480_000);
});
