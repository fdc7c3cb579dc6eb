/**
 * One case of the crash matrix: a real `slivingdoc` process is killed with SIGKILL at a
 * named engine failpoint, then fresh processes make the next calls, and the invariants of
 * contract §10 are checked from outside (store bytes, P's files, L's files).
 */
import { appendFile, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { FAILPOINTS_ENV, type FailpointName } from '@slivingdoc/engine';
import type { SuccessResult } from '@slivingdoc/envelope';
import { CURRENT_KEY, createEmbeddedStore, decodeManifest } from '@slivingdoc/store';
import { type CliRun, runCli } from '../cli';
import { withService } from '../store-spec';

/** The call that gets killed. */
export type CrashOperation = 'commit' | 'pull';

/** The outcome of one case: whether the failpoint fired, and every broken invariant. */
export interface CrashCaseReport {
  failpoint: FailpointName;
  operation: CrashOperation;
  /** True when the process died of SIGKILL (the failpoint was on this call's path). */
  killed: boolean;
  /** The repairing call's first line (`OK  generation …` or the error's `CODE · REASON`). */
  repair: string;
  problems: string[];
}

/** One case's private world: its store, private root and workspace root. */
export interface Env {
  root: string;
  storeDir: string;
  env: Record<string, string>;
}

/** A fresh world for one case, configured so that checkpoints, cleanup and consolidation run on every call. */
export async function newEnvironment(): Promise<Env> {
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-crash-'));
  const storeDir = join(root, 'store');
  const env = {
    HOME: join(root, 'home'),
    SLIVINGDOC_STORE_DIR: storeDir,
    SLIVINGDOC_PRIVATE_ROOT: join(root, 'private'),
    SLIVINGDOC_WORKSPACE_ROOT: join(root, 'ws'),
    // Every commit schedules a checkpoint and retains no old chain, so the checkpoint and
    // cleanup failpoints are on a commit's path too.
    SLIVINGDOC_CHECKPOINT_PACKS: '1',
    SLIVINGDOC_RETAINED_CHECKPOINTS: '0',
    // Every call consolidates P fully afterwards (test-only), so the consolidation failpoints
    // are on every call's path and every repair runs on a pruned P.
    SLIVINGDOC_TEST_CONSOLIDATE: 'always',
    LOG_LEVEL: 'error',
  };
  await mkdir(join(root, 'ws'), { recursive: true });
  return { root, storeDir, env };
}

/** A real `slivingdoc` process in the case's world. */
export async function cli(
  e: Env,
  args: string[],
  extra: Record<string, string> = {},
): Promise<CliRun> {
  return runCli(args, { ...e.env, ...extra });
}

/**
 * Setup and witness calls run in this process through the engine library, on the same
 * store and private root as the CLI (cheap); only the calls under test are real processes.
 */
export function inProcess(
  e: Env,
  dir: string,
  op: { commit?: string; viaTools?: boolean },
): Promise<SuccessResult | undefined> {
  return withService(
    {
      spec: { kind: 'embedded', dir: e.storeDir, prefix: 'slivingdoc' },
      privateRoot: e.env.SLIVINGDOC_PRIVATE_ROOT as string,
      workspaceRoot: e.env.SLIVINGDOC_WORKSPACE_ROOT as string,
      notebookDir: dir,
    },
    op,
  );
}

/** The report's first line, or (for a run that printed none) its exit and stderr's last line. */
export function firstLine(run: CliRun): string {
  const line = (run.stdout.split('\n')[0] ?? '').trim();
  if (line !== '') return line;
  const lastErr = run.stderr.trim().split('\n').at(-1) ?? '';
  return `exit ${run.code ?? run.signal}, stderr: ${lastErr.slice(0, 300)}`;
}

async function filesOf(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const full = join(entry.parentPath, entry.name);
      files.set(relative(dir, full), await readFile(full, 'utf8'));
    }
  }
  return files;
}

/** Every state record under a private root. */
export async function findStateFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() && e.name === 'state.json')
    .map((e) => join(e.parentPath, e.name));
}

const same = (a: Map<string, string>, b: Map<string, string>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/**
 * Runs one case. Setup: directory `a` publishes a base file (acknowledged), directory `b`
 * publishes a remote change `a` has not seen, `a` makes a local edit. Then `a`'s `operation`
 * runs with the failpoint armed to kill; then fresh processes pull and commit `a`.
 */
export async function runCrashCase(
  failpoint: FailpointName,
  operation: CrashOperation,
): Promise<CrashCaseReport> {
  const e = await newEnvironment();
  const a = join(e.root, 'ws', 'a');
  const b = join(e.root, 'ws', 'b');
  const problems: string[] = [];
  await mkdir(a);
  await mkdir(b);
  await inProcess(e, a, {});
  await writeFile(join(a, 'base.md'), 'base 1\nbase 2\n');
  await inProcess(e, a, { commit: 'base' });
  await inProcess(e, b, {});
  await appendFile(join(b, 'base.md'), 'remote 3\n');
  await writeFile(join(b, 'remote.md'), 'from b\n');
  await inProcess(e, b, { commit: 'remote' });
  const acknowledged = [
    { file: 'base.md', line: 'base 1' },
    { file: 'remote.md', line: 'from b' },
  ];
  await writeFile(join(a, 'local.md'), 'local edit\n');

  const killedRun = await cli(
    e,
    operation === 'commit' ? ['commit', a, '-m', 'crashing'] : ['pull', a],
    { [FAILPOINTS_ENV]: `${failpoint}=kill` },
  );
  const killed = killedRun.signal === 'SIGKILL';
  if (!killed && killedRun.code !== 0)
    problems.push(`the un-killed ${operation} failed: ${firstLine(killedRun)}`);
  if (!killed && firstLine(killedRun).startsWith('OK') && operation === 'commit') {
    acknowledged.push({ file: 'local.md', line: 'local edit' });
  }

  // The next calls, from fresh processes: pull repairs, commit publishes what is left.
  const repair = await cli(e, ['pull', a]);
  if (repair.code !== 0 && !/^CONTENT_CONFLICT · MERGE_CONFLICT/.test(firstLine(repair))) {
    problems.push(`repairing pull answered ${firstLine(repair)}`);
  }
  for (const state of await findStateFiles(join(e.root, 'private'))) {
    const text = await readFile(state, 'utf8');
    if (/"recoveryRequired":\s*true/.test(text))
      problems.push(`recovery flag left after the repairing pull in ${relative(e.root, state)}`);
  }
  const followUp = await cli(e, ['commit', a, '-m', 'after repair']);
  if (followUp.code !== 0)
    problems.push(
      `follow-up commit answered ${firstLine(followUp)} (lock or P left inconsistent?)`,
    );

  // `current` validates; every acknowledged line is in R; L equals R.
  const store = await createEmbeddedStore({ dir: e.storeDir, prefix: 'slivingdoc' });
  const current = await store.get(CURRENT_KEY);
  try {
    if (current === undefined) problems.push('current is absent');
    else decodeManifest(current.body);
  } catch (err) {
    problems.push(`current does not validate: ${(err as Error).message}`);
  }
  const witness = join(e.root, 'ws', 'witness');
  await mkdir(witness);
  await inProcess(e, witness, {}).catch((err: Error) =>
    problems.push(`a fresh pull of R failed: ${err.message}`),
  );
  const remote = await filesOf(witness);
  for (const ack of acknowledged) {
    if (!(remote.get(ack.file) ?? '').split('\n').includes(ack.line))
      problems.push(`acknowledged line ${JSON.stringify(ack.line)} missing from R`);
  }
  // The killed call's local edit was either published or kept and published by the follow-up.
  if (!(remote.get('local.md') ?? '').includes('local edit'))
    problems.push('the local edit of the killed call vanished');
  if (followUp.code === 0 && !same(await filesOf(a), remote))
    problems.push('L differs from R after the follow-up commit');
  return { failpoint, operation, killed, repair: firstLine(repair), problems };
}
