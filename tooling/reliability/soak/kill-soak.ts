/**
 * The random-kill soak: several real `slivingdoc serve` processes commit random line
 * insertions into their own and shared files while a killer SIGKILLs one of them at random
 * moments (mid-call or between calls, never only at failpoints) and it is started again on the
 * same directories. On S3 the servers reach the real server through the fault proxy, which
 * drops, resets or delays a steady share of requests. Afterwards every directory pulls once
 * more, and an independent reader checks every acknowledged line against the final notebook,
 * that no marker survived, and that every directory converged to R with its recovery flag down
 * and no non-retryable answer on the way.
 */
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createNotebookService } from '@slivingdoc/engine';
import { addToken } from '@slivingdoc/http';
import { CURRENT_KEY, decodeManifest } from '@slivingdoc/store';
import { type FaultProxy, type FaultRule, startFaultProxy } from '@slivingdoc/testkit/fault-proxy';
import type { S3TestEnv } from '@slivingdoc/testkit/s3-env';
import { seededRandom } from '@slivingdoc/testkit/seeded-random';
import { isRetryable } from '../catalogue';
import { requireBuiltCli } from '../cli';
import { openStore, type StoreSpec } from '../store-spec';
import { checkSoak, type SoakReport } from './checker';
import { insertLine, readText } from './edits';
import { HubSoakSession, SoakHub } from './hub-server';
import type { AcknowledgedLine, WriterLedger } from './ledger';
import { keepBothSides } from './resolve';
import { type ServerLaunch, type SoakParticipant, SoakServer, type ToolAnswer } from './server';

/** Size, store and seed of one run. */
export interface KillSoakOptions {
  writers: number;
  /**
   * OK commits to reach over all writers together. The writers go on past it until every kill
   * has landed, so the run kills exactly `kills` times whatever the machine's pace.
   */
  commits: number;
  /** Kills to spread over the run (one about every `commits / kills` OK commits). */
  kills: number;
  seed: number;
  store: { kind: 'embedded' } | { kind: 's3'; s3: S3TestEnv; faultRate: number };
  sharedFiles?: number;
  checkpointPacks?: number;
  /**
   * Consolidate P fully after every call (test-only `SLIVINGDOC_TEST_CONSOLIDATE=always`), so
   * a short run kills servers inside consolidations and repairs on pruned P many times. Off,
   * P is consolidated at its thresholds (every few commits).
   */
  consolidateAlways?: boolean;
  /**
   * One `serve --listen` hub serves every writer as a session (own token, own
   * directory); a kill SIGKILLs the hub, so every writer loses its server at once.
   */
  hub?: boolean;
  /** Called about once a minute with a line of running figures (a long run's partial result). */
  onProgress?: (line: string) => void;
}

/** The soak's figures and everything that broke a promise. */
export interface KillSoakReport extends SoakReport {
  kills: number;
  /** Kills the run asked for (`KillSoakOptions.kills`): a run that landed fewer proves less. */
  killsWanted: number;
  /** Kills that landed while a call was in flight. */
  midCallKills: number;
  restarts: number;
  /** Starts that failed (retried): on S3 a faulted startup probe refuses to start. */
  failedStarts: number;
  /** Servers that exited without being killed (crashes). */
  unexpectedExits: number;
  /** Non-retryable answers, e.g. `w2 STORAGE_INTEGRITY · MISSING_OBJECT` (none may occur). */
  nonRetryable: string[];
  /** Conflicts reported in a writer-owned file (only its owner edits it: always spurious). */
  spuriousConflicts: string[];
  /** Directories that did not end equal to R with the flag down, and why. */
  stuck: string[];
  /** Requests the fault proxy faulted (S3 only). */
  faults: number;
  manifestGeneration: number;
  runDir: string;
}

const MAX_ANSWERS = 400;
const MAX_STARTS = 60;
const KILL_DELAY_MS = 400;
/**
 * How far past `commits` the writers go while kills are still due. A killer that cannot land
 * its kills by then has found no live server to kill for that long, which the report shows as
 * fewer kills than asked for.
 */
const OVERRUN_FACTOR = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Writer {
  index: number;
  dir: string;
  privateRoot: string;
  server: SoakParticipant;
  random: () => number;
  ledger: WriterLedger;
  stuck?: string;
}

interface Run {
  opts: KillSoakOptions;
  committed: number;
  /** Kills landed so far, and how many of them while a call was in flight. */
  kills: number;
  midCallKills: number;
  restarts: number;
  failedStarts: number;
  nonRetryable: string[];
  spuriousConflicts: string[];
}

async function ensureRunning(run: Run, w: Writer): Promise<void> {
  for (let start = 1; !w.server.running; start += 1) {
    try {
      await w.server.start();
      run.restarts += 1;
    } catch (error) {
      run.failedStarts += 1;
      if (start >= MAX_STARTS)
        throw new Error(`w${w.index}: ${(error as Error).message}\n${w.server.lastLog()}`);
      await sleep(200);
    }
  }
}

/** Runs one call through every answer that calls for another try; the OK answer. */
async function settle(
  run: Run,
  w: Writer,
  name: 'notes_pull' | 'notes_commit',
  args: Record<string, string>,
): Promise<Exclude<ToolAnswer, 'killed'>> {
  for (let answer = 1; answer <= MAX_ANSWERS; answer += 1) {
    await ensureRunning(run, w);
    const a = await w.server.call(name, args);
    if (a === 'killed') continue;
    if (a.code === 'OK') return a;
    const token = `w${w.index} ${name} ${a.code} · ${a.reason}`;
    if (a.code === 'CONTENT_CONFLICT') {
      w.ledger.totals.conflicts += 1;
      for (const issue of a.files ?? []) {
        if (issue.reason !== 'TEXT_CONFLICT' && issue.reason !== 'MARKER_BLOCK') {
          w.ledger.anomalies.push(
            `unexpected conflict file reason ${issue.reason} on ${issue.path}`,
          );
          continue;
        }
        if (issue.path.startsWith('writers/')) run.spuriousConflicts.push(`${token} ${issue.path}`);
        const path = join(w.dir, issue.path);
        const resolved = keepBothSides(await readText(path), issue.ranges ?? []);
        await writeFile(path, resolved.text);
        w.ledger.resolutions.push({ file: issue.path, removed: resolved.removed });
      }
    } else if (a.code === 'REMOTE_BUSY') {
      w.ledger.totals.remoteBusy += 1;
    } else if (isRetryable(a.code, a.reason ?? '')) {
      w.ledger.totals.transient += 1;
    } else {
      // Counted, then tried again: a directory that never recovers ends up stuck.
      run.nonRetryable.push(token);
      await sleep(100);
    }
  }
  throw new Error(`no OK after ${MAX_ANSWERS} answers`);
}

/** Writers commit until the commit target is reached and every kill has landed (bounded). */
function moreCommitsWanted(run: Run): boolean {
  if (run.committed >= run.opts.commits * OVERRUN_FACTOR) return false;
  return run.committed < run.opts.commits || run.kills < run.opts.kills;
}

async function runWriter(run: Run, w: Writer): Promise<void> {
  const shared = run.opts.sharedFiles ?? 3;
  let pending: Omit<AcknowledgedLine, 'generation'>[] = [];
  try {
    await settle(run, w, 'notes_pull', {});
    for (let c = 0; moreCommitsWanted(run); c += 1) {
      const edits = 1 + Math.floor(w.random() * 3);
      for (let e = 0; e < edits; e += 1) {
        const own = w.random() < 0.4;
        const file = own
          ? `writers/w${w.index}.md`
          : `shared/s${Math.floor(w.random() * shared)}.md`;
        // Mostly near the top, so writers touch the same or adjacent lines.
        const at = w.random() < 0.7 ? Math.floor(w.random() * 3) : Math.floor(w.random() * 1000);
        const line = `w${w.index} c${c} e${e} ${w.random().toString(36).slice(2, 8)}`;
        await insertLine(w.dir, file, line, at);
        pending.push({ file, line });
      }
      const ok = await settle(run, w, 'notes_commit', { message: `kill-soak w${w.index} c${c}` });
      run.committed += 1;
      w.ledger.totals.commits += 1;
      const generation = ok.generation ?? -1;
      if ((ok.files?.length ?? 0) > 0) w.ledger.publishedGenerations.push(generation);
      for (const p of pending) w.ledger.acknowledged.push({ ...p, generation });
      pending = [];
    }
  } catch (error) {
    w.stuck = (error as Error).message;
  }
}

/**
 * Kills a random live writer's server once in each slot of `commits / kills` OK commits, at a
 * random point of the slot and after a random delay, so kills land mid-call and between calls.
 */
async function killer(
  run: Run,
  writers: Writer[],
  random: () => number,
  done: () => boolean,
): Promise<void> {
  // The last tenth of the run is left without kills: every slot then fits before the end.
  const every = (0.9 * run.opts.commits) / Math.max(run.opts.kills, 1);
  for (let slot = 0; slot < run.opts.kills && !done(); slot += 1) {
    const at = every * (slot + random());
    while (!done() && run.committed < at) await sleep(10);
    await sleep(random() * KILL_DELAY_MS);
    // A victim whose server is still restarting is skipped for one that runs.
    for (;;) {
      if (done()) return;
      const live = writers.filter((w) => w.stuck === undefined && w.server.running);
      const outcome = live[Math.floor(random() * live.length)]?.server.kill();
      if (outcome?.killed) {
        run.kills += 1;
        if (outcome.midCall) run.midCallKills += 1;
        break;
      }
      await sleep(20);
    }
  }
}

/** The fault proxy's rules: drops, resets and delays, each a third of `rate`, seeded. */
function faultRules(rate: number, random: () => number): FaultRule[] {
  const share = () => random() < rate / 3;
  return [
    { sample: share, fault: { kind: 'drop-response' } },
    { sample: share, fault: { kind: 'reset-before' } },
    { sample: share, fault: { kind: 'delay', ms: 300 + Math.floor(random() * 1200) } },
  ];
}

async function readTree(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    files.set(relative(dir, full), await readFile(full, 'utf8'));
  }
  return files;
}

function sameTree(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, text] of a) if (b.get(path) !== text) return false;
  return true;
}

async function flagRaised(privateRoot: string): Promise<boolean> {
  const notebooks = join(privateRoot, 'notebooks');
  for (const key of await readdir(notebooks).catch(() => [] as string[])) {
    const text = await readFile(join(notebooks, key, 'state.json'), 'utf8').catch(() => '');
    if (text.includes('"recoveryRequired":true')) return true;
  }
  return false;
}

/** The test-only switch that consolidates P fully after every call, when asked for. */
function consolidationEnv(opts: KillSoakOptions): Record<string, string> {
  return opts.consolidateAlways === true ? { SLIVINGDOC_TEST_CONSOLIDATE: 'always' } : {};
}

/** The hub variant's hub: one token per writer (`w<i>`, its directory under the hub's root). */
async function startHub(
  runDir: string,
  opts: KillSoakOptions,
  storeArgs: string[],
  storeEnv: Record<string, string>,
): Promise<{ hub: SoakHub; tokens: string[]; workspaceRoot: string; privateRoot: string }> {
  const workspaceRoot = join(runDir, 'hub', 'notebooks');
  const privateRoot = join(runDir, 'hub', 'private');
  const tokenFile = join(runDir, 'hub', 'tokens.json');
  await mkdir(workspaceRoot, { recursive: true });
  const tokens = Array.from({ length: opts.writers }, (_, i) => addToken(tokenFile, `w${i}`));
  const hub = new SoakHub({
    args: [
      '--listen',
      '127.0.0.1:0',
      '--workspace-root',
      workspaceRoot,
      '--private-root',
      privateRoot,
      '--checkpoint-packs',
      String(opts.checkpointPacks ?? 1024),
      ...storeArgs,
    ],
    env: {
      HOME: join(runDir, 'hub'),
      TMPDIR: join(runDir, 'hub'),
      LOG_LEVEL: 'app=info,error',
      SLIVINGDOC_TOKEN_FILE: tokenFile,
      ...consolidationEnv(opts),
      ...storeEnv,
    },
  });
  return { hub, tokens, workspaceRoot, privateRoot };
}

/** Runs the soak and checks it; never throws for a broken promise (the report says it). */
export async function runKillSoak(opts: KillSoakOptions): Promise<KillSoakReport> {
  await requireBuiltCli();
  const runDir = await mkdtemp(join(tmpdir(), 'slivingdoc-kill-soak-'));
  const prefix = `kill-soak/${relative(tmpdir(), runDir)}`;
  const random = seededRandom(opts.seed);
  let proxy: FaultProxy | undefined;
  let storeArgs: string[];
  let storeEnv: Record<string, string> = {};
  let readerSpec: StoreSpec;
  if (opts.store.kind === 's3') {
    const { s3, faultRate } = opts.store;
    proxy = await startFaultProxy({ target: s3.endpoint, rules: faultRules(faultRate, random) });
    storeArgs = ['--bucket', s3.bucket, '--endpoint', proxy.url, '--prefix', prefix];
    storeEnv = {
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_REGION: 'us-east-1',
    };
    // The independent reader goes to the server directly, past the faults.
    readerSpec = { kind: 's3', prefix, ...s3 };
  } else {
    const dir = join(runDir, 'store');
    storeArgs = ['--store-dir', dir, '--prefix', prefix];
    readerSpec = { kind: 'embedded', dir, prefix };
  }
  const writers: Writer[] = [];
  const hub = opts.hub ? await startHub(runDir, opts, storeArgs, storeEnv) : undefined;
  for (let index = 0; index < opts.writers; index += 1) {
    const home = join(runDir, `w${index}`);
    const dir = hub ? join(hub.workspaceRoot, `w${index}`) : join(home, 'notebook');
    const privateRoot = hub ? hub.privateRoot : join(home, 'private');
    await mkdir(dir, { recursive: true });
    const launch: ServerLaunch = {
      args: [
        '--workspace-root',
        dir,
        '--private-root',
        privateRoot,
        '--checkpoint-packs',
        String(opts.checkpointPacks ?? 1024),
        ...storeArgs,
      ],
      env: {
        HOME: home,
        TMPDIR: home,
        LOG_LEVEL: 'error',
        ...consolidationEnv(opts),
        ...storeEnv,
      },
    };
    writers.push({
      index,
      dir,
      privateRoot,
      server: hub
        ? new HubSoakSession(hub.hub, hub.tokens[index]!, index === 0)
        : new SoakServer(launch),
      random: seededRandom(opts.seed * 1000 + index + 1),
      ledger: {
        writer: index,
        acknowledged: [],
        resolutions: [],
        totals: { commits: 0, conflicts: 0, retries: 0, remoteBusy: 0, transient: 0 },
        publishedGenerations: [],
        anomalies: [],
      },
    });
  }
  const run: Run = {
    opts,
    committed: 0,
    kills: 0,
    midCallKills: 0,
    restarts: 0,
    failedStarts: 0,
    nonRetryable: [],
    spuriousConflicts: [],
  };
  let finished = false;
  const killing = killer(run, writers, random, () => finished);
  const progress = setInterval(() => {
    opts.onProgress?.(
      `OK commits ${run.committed}, kills ${run.kills} (mid-call ${run.midCallKills}), restarts ${run.restarts}, failed starts ${run.failedStarts}, non-retryable ${run.nonRetryable.length}, spurious conflicts ${run.spuriousConflicts.length}, stuck writers ${writers.filter((w) => w.stuck !== undefined).length}`,
    );
  }, 60_000);
  await Promise.all(writers.map((w) => runWriter(run, w)));
  finished = true;
  await killing;
  clearInterval(progress);

  // Every directory pulls once more, then the independent reader takes the final notebook.
  for (const w of writers) {
    if (w.stuck !== undefined) continue;
    try {
      await settle(run, w, 'notes_pull', {});
    } catch (error) {
      w.stuck = (error as Error).message;
    }
  }
  for (const w of writers) await w.server.close();
  await hub?.hub.close();
  const finalDir = join(runDir, 'final', 'notebook');
  await mkdir(finalDir, { recursive: true });
  const reader = await openStore(readerSpec);
  const service = await createNotebookService({
    store: reader,
    privateRoot: join(runDir, 'final', 'private'),
    workspaceRoot: finalDir,
    notebookDir: finalDir,
  });
  await service.pull({});
  await service.close();
  const current = await reader.get(CURRENT_KEY);
  await reader.close?.();
  await proxy?.close();
  const finalFiles = await readTree(finalDir);
  const stuck: string[] = [];
  for (const w of writers) {
    if (w.stuck !== undefined) stuck.push(`w${w.index}: ${w.stuck.slice(0, 500)}`);
    else if (!sameTree(await readTree(w.dir), finalFiles))
      stuck.push(`w${w.index}: L differs from R`);
    else if (await flagRaised(w.privateRoot)) stuck.push(`w${w.index}: recovery flag left raised`);
  }
  return {
    ...checkSoak(
      writers.map((w) => w.ledger),
      finalFiles,
    ),
    kills: run.kills,
    killsWanted: opts.kills,
    midCallKills: run.midCallKills,
    restarts: run.restarts,
    failedStarts: run.failedStarts,
    unexpectedExits: writers.reduce((n, w) => n + w.server.unexpectedExits, 0),
    nonRetryable: run.nonRetryable,
    spuriousConflicts: run.spuriousConflicts,
    stuck,
    faults: proxy?.records.filter((r) => r.action !== 'forward').length ?? 0,
    manifestGeneration: current === undefined ? 0 : Number(decodeManifest(current.body).generation),
    runDir,
  };
}

/** Everything that broke a promise, as readable lines (empty = every promise held). */
export function killSoakProblems(r: KillSoakReport): string[] {
  const problems: string[] = [];
  if (r.lost > 0)
    problems.push(
      `lost ${r.lost} acknowledged lines, e.g. ${JSON.stringify(r.lostLines.slice(0, 3))}`,
    );
  // Generations told to more than one publishing commit are the groups of group commit
  // (its members share the generation of the one CAS): reported, not a problem.
  if (r.filesWithMarkers.length > 0)
    problems.push(`markers in R: ${r.filesWithMarkers.join(', ')}`);
  if (r.stuck.length > 0) problems.push(`stuck directories: ${r.stuck.join(' | ')}`);
  if (r.nonRetryable.length > 0)
    problems.push(
      `${r.nonRetryable.length} non-retryable answers, e.g. ${r.nonRetryable.slice(0, 3).join('; ')}`,
    );
  if (r.spuriousConflicts.length > 0)
    problems.push(
      `${r.spuriousConflicts.length} conflicts in writer-owned files, e.g. ${r.spuriousConflicts.slice(0, 3).join('; ')}`,
    );
  if (r.kills < r.killsWanted) problems.push(`only ${r.kills} of ${r.killsWanted} kills landed`);
  if (r.unexpectedExits > 0) problems.push(`${r.unexpectedExits} servers exited without a kill`);
  if (r.anomalies.length > 0) problems.push(`anomalies: ${r.anomalies.slice(0, 5).join('; ')}`);
  if (r.acknowledgedLines === 0) problems.push('nothing was acknowledged');
  return problems;
}

/** One line of figures, as `pnpm soak` prints it and docs/reliability.md records it. */
export function formatKillSoak(label: string, r: KillSoakReport): string {
  return `${label}: writers ${r.writers}, OK commits ${r.commits}, kills ${r.kills} (mid-call ${r.midCallKills}), restarts ${r.restarts}, failed starts ${r.failedStarts}, conflicts ${r.conflicts}, spurious conflicts ${r.spuriousConflicts.length}, non-retryable ${r.nonRetryable.length}, faults ${r.faults}, acknowledged lines ${r.acknowledgedLines}, lost = ${r.lost}, stuck directories ${r.stuck.length} of ${r.writers}, markers in R ${r.filesWithMarkers.length}, generations shared by a group ${r.duplicateGenerations.length}, manifest generation ${r.manifestGeneration}`;
}
