/**
 * The group-commit column of the crash matrix (docs/engine.md, "Group commit"): a real holder
 * process is paused right after it read `current` inside its turn, member processes queue on
 * its group, then the holder resumes and is SIGKILLed at a named failpoint — and, in the
 * second variant, one member is SIGKILLed while it waits. Fresh processes then repair, and the
 * invariants of contract §10 are checked from outside: every OK is in R, `current` validates,
 * L equals R after a follow-up commit, and no commit was published twice.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  FAILPOINT,
  FAILPOINT_RESUME_SIGNAL,
  FAILPOINTS_ENV,
  type FailpointName,
  groupEndpoint,
} from '@slivingdoc/engine';
import { importPack } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import {
  CURRENT_KEY,
  createEmbeddedStore,
  decodeManifest,
  type ObjectStore,
} from '@slivingdoc/store';
import { catchesSignal, untilCatching } from '@slivingdoc/testkit/signal-wait';
import { until } from '@slivingdoc/testkit/until';
import { type CliRun, runCli } from '../cli';
import { withService } from '../store-spec';

/** Failpoints a holder passes in its turn or after it (the pause precedes them). */
export const GROUP_FAILPOINTS: FailpointName[] = [
  FAILPOINT.afterFetch,
  FAILPOINT.afterPackUpload,
  FAILPOINT.afterCasSent,
  FAILPOINT.afterCasAnswered,
  FAILPOINT.midMaterialize,
];

/** The outcome of one group case. */
export interface GroupCrashReport {
  failpoint: FailpointName;
  /** True when the holder died of SIGKILL. */
  holderKilled: boolean;
  /** How many members answered OK. */
  membersOk: number;
  problems: string[];
}

const MEMBERS = 3;

/**
 * The sockets bound at `address` (Linux /proc/net/unix: flags, state): the holder's listening
 * one, and the holder's side of each connection to it. Read without connecting, so a look
 * never shows up as a connection itself.
 */
function socketsAt(address: string): { flags: string; state: string }[] {
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[7] === address)
    .map((fields) => ({ flags: fields[3] ?? '', state: fields[5] ?? '' }));
}

/** Whether a process listens at `address` (the listening flag, __SO_ACCEPTCON). */
const listeningAt = (address: string) =>
  socketsAt(address).some((socket) => socket.flags === '00010000');

/** How many connections to `address` are open now (state 03, connected). */
const connectionsAt = (address: string) =>
  socketsAt(address).filter((socket) => socket.state === '03').length;

/**
 * Waits until every one of `members` has connected to the holder's group endpoint, however
 * long their processes take to start: a member connects only to join the group, and sends its
 * change at once (the paused holder reads it at once; one that arrives after the holder took
 * its queue is served in a second round of the same turn). Fails if a member ended first.
 */
async function untilQueued(address: string, members: ChildProcess[]): Promise<void> {
  while (connectionsAt(address) < members.length) {
    const ended = members.find((child) => child.exitCode !== null || child.signalCode !== null);
    if (ended !== undefined)
      throw new Error(`member ${ended.pid} ended before it joined the group`);
    await sleep(50);
  }
}

/**
 * Waits until `child` is held at its `pause` failpoint (it catches SIGUSR2 only then), so the
 * SIGUSR2 that resumes it can never arrive early and kill it (the signal's default action).
 */
async function untilHeld(child: ChildProcess | undefined): Promise<number> {
  const pid = child?.pid;
  if (pid === undefined) throw new Error('the holder process did not start');
  await untilCatching(pid, FAILPOINT_RESUME_SIGNAL);
  return pid;
}

/**
 * Resumes `pid` each time it is held at its `pause` failpoint again (a member that queued late
 * makes the holder serve a second round, which pauses again), until `stopped()`.
 */
async function resumeWhenHeld(pid: number, stopped: () => boolean): Promise<void> {
  let resumed = false;
  while (!stopped()) {
    const held = catchesSignal(pid, FAILPOINT_RESUME_SIGNAL);
    // One signal per pause: the next only once the holder consumed it and paused again.
    if (held && !resumed) {
      process.kill(pid, FAILPOINT_RESUME_SIGNAL);
      resumed = true;
    } else if (!held) resumed = false;
    // Short: a pause that ends and begins again between two looks would go unseen. A round of
    // the holder between them (a pack upload, a CAS, fsyncs) takes far longer than this.
    await sleep(5);
  }
}

const firstLine = (run: CliRun) => (run.stdout.split('\n')[0] ?? '').trim();

/** A store, P and workspace of one case: `h` and the members' directories under one root. */
async function caseRoots(dirs: string[]) {
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-group-crash-'));
  const storeDir = join(root, 'store');
  const env = {
    HOME: join(root, 'home'),
    SLIVINGDOC_STORE_DIR: storeDir,
    SLIVINGDOC_PRIVATE_ROOT: join(root, 'private'),
    SLIVINGDOC_WORKSPACE_ROOT: join(root, 'ws'),
    // A scope of its own: cases run side by side on one machine.
    SLIVINGDOC_TEST_GATE_SCOPE: root,
    LOG_LEVEL: 'error',
  };
  const at = (dir: string) => ({
    spec: { kind: 'embedded' as const, dir: storeDir, prefix: 'slivingdoc' },
    privateRoot: env.SLIVINGDOC_PRIVATE_ROOT,
    workspaceRoot: env.SLIVINGDOC_WORKSPACE_ROOT,
    notebookDir: join(root, 'ws', dir),
  });
  for (const dir of dirs) await mkdir(join(root, 'ws', dir), { recursive: true });
  const store = await createEmbeddedStore({ dir: storeDir, prefix: 'slivingdoc' });
  const endpoint = groupEndpoint({ store, gateScope: root });
  return { root, env, at, store, endpoint };
}

/**
 * Every commit message from `current`'s head back to its checkpoint, with its count (a missing
 * pack is one of the `problems`); `undefined` when there is no `current`.
 */
async function publishedMessages(
  store: ObjectStore,
  problems: string[],
): Promise<Map<string, number> | undefined> {
  const current = await store.get(CURRENT_KEY);
  if (current === undefined) return undefined;
  const manifest = decodeManifest(current.body);
  const db = openMemoryObjectDb();
  for (const descriptor of [manifest.checkpoint, ...manifest.increments]) {
    const pack = await store.get(descriptor.key);
    if (pack === undefined) problems.push(`pack ${descriptor.key} is missing`);
    else await importPack(db, pack.body);
  }
  const messages = new Map<string, number>();
  for (let oid: string | undefined = manifest.head; oid !== undefined; ) {
    const commit = await db.readCommit(oid);
    const message = Buffer.from(commit.message).toString('utf8');
    messages.set(message, (messages.get(message) ?? 0) + 1);
    oid = oid === manifest.checkpoint.head ? undefined : commit.parent;
  }
  return messages;
}

/**
 * Runs one case: holder `h`, members `m0…m2` (with `killMember`, `m0` is SIGKILLed while it
 * waits), every directory pulled after a base commit, each with one new file to commit.
 */
export async function runGroupCrashCase(
  failpoint: FailpointName,
  opts: { killMember: boolean },
): Promise<GroupCrashReport> {
  const dirs = ['h', ...Array.from({ length: MEMBERS }, (_, i) => `m${i}`)];
  const { root, env, at, store, endpoint } = await caseRoots(dirs);
  const problems: string[] = [];
  await withService(at('h'), {});
  await writeFile(join(root, 'ws', 'h', 'base.md'), 'base\n');
  await withService(at('h'), { commit: 'base' });
  for (const dir of dirs) {
    await withService(at(dir), {});
    await writeFile(join(root, 'ws', dir, `${dir}.md`), `edit of ${dir}\n`);
  }

  let holderChild: ChildProcess | undefined;
  const holder = runCli(
    ['commit', join(root, 'ws', 'h'), '-m', 'commit h'],
    {
      ...env,
      [FAILPOINTS_ENV]: `${FAILPOINT.afterReadCurrent}=pause,${failpoint}=kill`,
    },
    {
      onSpawn: (child) => {
        holderChild = child;
      },
    },
  );
  // The holder serves its group (and pauses right after, reading `current`).
  await until(() => listeningAt(endpoint), 'the holder serves its group', { everyMs: 100 });
  const holderPid = await untilHeld(holderChild);
  const memberChildren: ChildProcess[] = [];
  const members = dirs.slice(1).map((dir) =>
    runCli(['commit', join(root, 'ws', dir), '-m', `commit ${dir}`], env, {
      onSpawn: (child) => memberChildren.push(child),
    }),
  );
  await untilQueued(endpoint, memberChildren);
  if (opts.killMember) memberChildren[0]?.kill('SIGKILL');
  let exited = false;
  const resumer = resumeWhenHeld(holderPid, () => exited);
  const holderRun = await holder;
  exited = true;
  await resumer;
  const memberRuns = await Promise.all(members);
  const holderKilled = holderRun.signal === 'SIGKILL';

  const acknowledged: string[] = [];
  if (!holderKilled && firstLine(holderRun).startsWith('OK')) acknowledged.push('h');
  memberRuns.forEach((run, i) => {
    const dir = dirs[i + 1] as string;
    if (firstLine(run).startsWith('OK')) acknowledged.push(dir);
    else if (!(opts.killMember && i === 0))
      problems.push(`member ${dir} answered ${firstLine(run) || run.stderr.slice(-300)}`);
  });

  // Later calls (through the library: only the calls under test are processes) repair every
  // directory and publish what is left.
  for (const dir of dirs) {
    await withService(at(dir), {}).catch((err: Error) =>
      problems.push(`repairing pull of ${dir} failed: ${err.message}`),
    );
    await withService(at(dir), { commit: `after ${dir}` }).catch((err: Error) =>
      problems.push(`follow-up commit of ${dir} failed: ${err.message}`),
    );
  }

  // Every directory once more, now that every follow-up published: L must then equal R.
  for (const dir of dirs) await withService(at(dir), {});
  const messages = await publishedMessages(store, problems);
  if (messages === undefined) {
    problems.push('current is absent');
    return { failpoint, holderKilled, membersOk: acknowledged.length, problems };
  }
  for (const [message, count] of messages)
    if (count > 1) problems.push(`${JSON.stringify(message)} was published ${count} times`);
  for (const dir of acknowledged)
    if (messages.get(`commit ${dir}`) !== 1) problems.push(`the OK commit of ${dir} is not in R`);

  // Every edit is in R, and every L equals R.
  const witness = join(root, 'ws', 'witness');
  await mkdir(witness);
  await withService(at('witness'), {});
  for (const dir of dirs) {
    const text = await readFile(join(witness, `${dir}.md`), 'utf8').catch(() => '');
    if (text !== `edit of ${dir}\n`) problems.push(`the edit of ${dir} is not in R`);
    for (const other of dirs) {
      const mine = await readFile(join(root, 'ws', dir, `${other}.md`), 'utf8').catch(() => '');
      if (mine !== `edit of ${other}\n`) problems.push(`L of ${dir} differs from R at ${other}.md`);
    }
  }
  return { failpoint, holderKilled, membersOk: acknowledged.length, problems };
}

/** The outcome of the case of a member killed after the group's CAS landed. */
export interface MemberKilledReport {
  /** True when the member died of SIGKILL (at its first read of `current` after the verdict). */
  memberKilled: boolean;
  /** True when the member's commit is in R: the group's CAS carried it. */
  memberPublished: boolean;
  problems: string[];
}

/**
 * A holder `h` and one member `m` append a line each to one shared file. The holder pauses
 * right after reading `current` in its turn, the member queues; the holder then publishes
 * both, and the member is SIGKILLed at its first read of `current` after its OK verdict:
 * after the group's CAS landed, before it rewrote L or recorded a baseline. Its next call (a
 * real `pull`) must answer OK with L equal to R and every line exactly once (docs/engine.md,
 * "A member's publication input").
 */
export async function runMemberKilledAfterCas(): Promise<MemberKilledReport> {
  const { root, env, at, store, endpoint } = await caseRoots(['h', 'm', 'witness']);
  const shared = (dir: string) => join(root, 'ws', dir, 'shared.md');
  const problems: string[] = [];
  await withService(at('h'), {});
  await writeFile(shared('h'), 'base\n');
  await withService(at('h'), { commit: 'base' });
  await withService(at('m'), {});
  await writeFile(shared('h'), 'base\nline of h\n');
  await writeFile(shared('m'), 'base\nline of m\n');

  let holderChild: ChildProcess | undefined;
  const holder = runCli(
    ['commit', join(root, 'ws', 'h'), '-m', 'commit h'],
    { ...env, [FAILPOINTS_ENV]: `${FAILPOINT.afterReadCurrent}=pause` },
    { onSpawn: (child) => (holderChild = child) },
  );
  await until(() => listeningAt(endpoint), 'the holder serves its group', { everyMs: 100 });
  // The member reads `current` first after its verdict (before that it only joins the group).
  let memberChild: ChildProcess | undefined;
  const member = runCli(
    ['commit', join(root, 'ws', 'm'), '-m', 'commit m'],
    { ...env, [FAILPOINTS_ENV]: `${FAILPOINT.afterReadCurrent}=kill` },
    { onSpawn: (child) => (memberChild = child) },
  );
  const holderPid = await untilHeld(holderChild);
  await untilQueued(endpoint, memberChild === undefined ? [] : [memberChild]);
  let finished = false;
  const resumer = resumeWhenHeld(holderPid, () => finished);
  const [holderRun, memberRun] = await Promise.all([holder, member]);
  finished = true;
  await resumer;
  if (!firstLine(holderRun).startsWith('OK'))
    problems.push(`the holder answered ${firstLine(holderRun) || holderRun.stderr.slice(-300)}`);
  const messages = await publishedMessages(store, problems);
  const memberPublished = messages?.get('commit m') === 1;

  // The member's next call, a real process like the killed one.
  const pull = await runCli(['pull', join(root, 'ws', 'm')], env);
  if (!firstLine(pull).startsWith('OK'))
    problems.push(`the member's pull answered ${firstLine(pull) || pull.stderr.slice(-300)}`);
  await withService(at('witness'), {});
  const accepted = await readFile(shared('witness'), 'utf8');
  for (const line of ['base', 'line of h', 'line of m']) {
    const count = accepted.split('\n').filter((l) => l === line).length;
    if (count !== 1) problems.push(`R holds ${JSON.stringify(line)} ${count} times`);
  }
  const mine = await readFile(shared('m'), 'utf8');
  if (mine !== accepted)
    problems.push(`L of m is ${JSON.stringify(mine)}, R is ${JSON.stringify(accepted)}`);
  return { memberKilled: memberRun.signal === 'SIGKILL', memberPublished, problems };
}
