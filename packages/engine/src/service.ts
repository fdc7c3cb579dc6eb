import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  DomainError,
  isDomainError,
  type PathSets,
  type SuccessResult,
} from '@slivingdoc/envelope';
import { openObjectDb } from '@slivingdoc/merge';
import {
  checkMessage,
  createPathPolicy,
  parseRequestPath,
  resolveRequestPath,
} from '@slivingdoc/policy';
import {
  ChangeMonitor,
  hasStateRecord,
  openPrivateState,
  openRegistry,
} from '@slivingdoc/workspace';
import { runCheckpoint } from './checkpoint';
import { commitLocked } from './commit';
import { type EngineConfig, resolveConfig } from './config';
import { type CallState, type DirContext, newCall, TreeCache } from './context';
import { classifyKnown, engineFailure, isAbort } from './errors';
import { pullLocked } from './pull';
import { holdsHead, readCurrent } from './remote';
import { conflictIssues, type Entry, enterDirectory, synchronize } from './sync';
import { mergeConflict, notPulled, resyncPending } from './verdicts';

/** A pull request: the path is the caller's raw string (decoded, not yet resolved). */
export interface PullRequest {
  path?: string;
  signal?: AbortSignal;
}

/** A commit request: the message is kept byte for byte. */
export interface CommitRequest {
  message: string;
  path?: string;
  signal?: AbortSignal;
}

/**
 * The notebook service: pull and commit for any directory at or below the workspace root.
 * Both resolve to the page's success object or reject with a `DomainError`
 * (`@slivingdoc/envelope`); a cancelled call rejects with its signal's reason.
 */
export interface NotebookService {
  /** The normalised path sets this service enforces. */
  readonly sets: PathSets;
  /** The service's own notebook directory (realpath). */
  readonly notebookDir: string;
  pull(request: PullRequest): Promise<SuccessResult>;
  commit(request: CommitRequest): Promise<SuccessResult>;
  /** Waits for background checkpoints (bounded) and releases every lock. */
  close(): Promise<void>;
}

async function realpathOrSelf(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}

/**
 * Opens a notebook service. Throws `RangeError` on a setting out of range and the policy's
 * error on invalid path sets; touches neither the store nor any directory.
 */
export async function createNotebookService(config: EngineConfig): Promise<NotebookService> {
  const cfg = resolveConfig(config, homedir());
  const policy = createPathPolicy({ writable: cfg.writable, readOnly: cfg.readOnly });
  const workspaceRoot = await realpath(cfg.workspaceRoot);
  const notebookDir = await realpathOrSelf(cfg.notebookDir);
  const registry = openRegistry(cfg.privateRoot);
  const contexts = new Map<string, Promise<DirContext>>();
  const background = new Set<Promise<unknown>>();
  let checkpointRunning = false;

  async function openContext(dir: string): Promise<DirContext> {
    const priv = await openPrivateState({
      privateRoot: cfg.privateRoot,
      notebookDir: dir,
      storageIdentity: cfg.store.identity,
    });
    const db = await openObjectDb({ gitdir: priv.gitdir });
    return {
      cfg,
      policy,
      registry,
      dir,
      priv,
      monitor: new ChangeMonitor(dir),
      db,
      packCacheDir: join(priv.dir, 'pack-cache'),
      trees: new TreeCache(),
      verifiedHeads: new Set(),
      onPublished: (activeIncrements) => scheduleCheckpoint(dir, activeIncrements),
    };
  }

  function contextFor(dir: string): Promise<DirContext> {
    let context = contexts.get(dir);
    if (context === undefined) {
      context = openContext(dir);
      context.catch(() => contexts.delete(dir));
      contexts.set(dir, context);
    }
    return context;
  }

  function scheduleCheckpoint(dir: string, activeIncrements: number): void {
    if (activeIncrements < cfg.checkpointPacks || checkpointRunning) return;
    checkpointRunning = true;
    const run = contextFor(dir)
      .then(runCheckpoint)
      .catch((err: unknown) => cfg.logger.warn({ err }, 'checkpoint failed'))
      .finally(() => {
        checkpointRunning = false;
        background.delete(run);
      });
    background.add(run);
  }

  async function resolveDir(raw: string | undefined, create: boolean): Promise<string> {
    const requested = parseRequestPath(raw, { home: cfg.home });
    const managed = await registry.list();
    try {
      return await resolveRequestPath({ requested, notebookDir, workspaceRoot, managed, create });
    } catch (err) {
      // Anything but a catalogued refusal is a failure to create the requested directory in L.
      throw isDomainError(err) ? err : engineFailure(err, 'local');
    }
  }

  /**
   * Runs `work` under the directory's lock with failure handling: known failures map onto the
   * catalogue; an unexpected failure after L started changing is repaired and reported as
   * RECOVERY_FAILURE; before that, ENGINE_FAILED.
   */
  async function guarded(
    dir: string,
    signal: AbortSignal | undefined,
    work: (ctx: DirContext, call: CallState) => Promise<SuccessResult>,
  ): Promise<SuccessResult> {
    let ctx: DirContext;
    try {
      ctx = await contextFor(dir);
    } catch (err) {
      throw classifyKnown(err) ?? engineFailure(err, 'private');
    }
    const release = await ctx.priv
      .lock({ timeoutMs: cfg.lockTimeoutMs, ...(signal === undefined ? {} : { signal }) })
      .catch((err: unknown) => {
        if (isAbort(err, signal)) throw err;
        throw classifyKnown(err) ?? engineFailure(err, 'private');
      });
    const call = newCall(signal);
    try {
      const result = await work(ctx, call);
      // A call cancelled once past the point of no return (a sent CAS) finished its work so
      // L, P and R agree; only its result is discarded (docs/interfaces.md).
      signal?.throwIfAborted();
      return result;
    } catch (err) {
      if (isAbort(err, signal) && !call.mutationStarted) throw err;
      if (call.mutationStarted) throw await repairAfterFailure(ctx, call, err);
      const known = classifyKnown(err);
      if (known !== undefined) throw known;
      cfg.logger.error({ err, stage: call.stage }, 'unexpected engine failure');
      throw engineFailure(err, call.stage === 'materialize' ? 'local' : 'private');
    } finally {
      await release();
    }
  }

  /** SPEC §10: stop, try to rebuild L and P from `current`, report what happened. */
  async function repairAfterFailure(
    ctx: DirContext,
    failed: CallState,
    cause: unknown,
  ): Promise<DomainError> {
    cfg.logger.error(
      { err: cause, stage: failed.stage },
      'failure while rewriting the notebook directory',
    );
    const repair = newCall(undefined);
    let resynchronized = false;
    let files: Awaited<ReturnType<typeof conflictIssues>> = [];
    try {
      const synced = await synchronize(ctx, repair, await enterDirectory(ctx), {});
      files = await conflictIssues(ctx, synced.conflicts, synced.final);
      resynchronized = true;
    } catch (err) {
      cfg.logger.error({ err }, 'repair failed; the recovery flag stays for the next call');
    }
    return new DomainError({
      code: 'RECOVERY_FAILURE',
      reason: 'UNEXPECTED_FAILURE',
      message: resynchronized
        ? files.length > 0
          ? 'The operation failed while rewriting the notebook directory; it was rebuilt from the accepted notebook with your edits merged back, and the listed files hold conflict blocks.'
          : 'The operation failed while rewriting the notebook directory; it was rebuilt from the accepted notebook with your edits merged back.'
        : 'The operation failed while rewriting the notebook directory and the repair could not finish; your files are kept as they are and the next call repairs first.',
      files,
      recovery: { stage: failed.stage, remoteAccepted: failed.remoteAccepted, resynchronized },
      cause,
    });
  }

  /**
   * True when an attempt recorded since the baseline landed in the store although no call
   * recorded it (its process was killed after the swap): the commit then synchronises first, so
   * the lines it already published are not published again.
   */
  async function publishedUnrecorded(ctx: DirContext, entry: Entry): Promise<boolean> {
    const attempts = entry.target?.rewrites.filter((r) => r.input === true) ?? [];
    if (attempts.length === 0) return false;
    const current = await readCurrent(ctx.cfg.store).catch(() => undefined);
    return attempts.some((attempt) => holdsHead(current, attempt.next.head));
  }

  /** Entry repair before a commit: its conflicts end the call; a store outage is RESYNC_PENDING. */
  async function repairOnEntry(ctx: DirContext, call: CallState, entry: Entry): Promise<Entry> {
    if (!entry.repairPending && !(await publishedUnrecorded(ctx, entry))) return entry;
    try {
      const synced = await synchronize(ctx, call, entry, {});
      if (synced.conflicts.length > 0)
        throw mergeConflict(await conflictIssues(ctx, synced.conflicts, synced.final));
    } catch (err) {
      const known = classifyKnown(err);
      if (known?.code === 'STORAGE_FAILURE') throw resyncPending(err);
      throw err;
    }
    return enterDirectory(ctx);
  }

  return {
    sets: policy.sets,
    notebookDir,

    async pull(request) {
      const dir = await resolveDir(request.path, true);
      return guarded(dir, request.signal, async (ctx, call) => {
        const entry = await enterDirectory(ctx);
        try {
          return await pullLocked(ctx, call, entry);
        } catch (err) {
          const known = classifyKnown(err);
          const flagged = entry.repairPending && !entry.stateMissing;
          if (flagged && !call.mutationStarted && known?.code === 'STORAGE_FAILURE')
            throw resyncPending(err);
          throw err;
        }
      });
    },

    async commit(request) {
      const raw = request.path;
      parseRequestPath(raw, { home: cfg.home });
      checkMessage(request.message);
      const dir = await resolveDir(raw, false);
      if (!(await registry.list()).includes(dir)) {
        // SPEC §2 order: lock, pending repair, then NOT_PULLED. Without a state record there
        // is nothing to repair and nothing is created; with one (a first pull that failed
        // while rewriting L), the repair runs under the lock first.
        const location = {
          privateRoot: cfg.privateRoot,
          notebookDir: dir,
          storageIdentity: cfg.store.identity,
        };
        if (!(await hasStateRecord(location))) throw notPulled();
        return guarded(dir, request.signal, async (ctx, call) => {
          await repairOnEntry(ctx, call, await enterDirectory(ctx));
          throw notPulled();
        });
      }
      return guarded(dir, request.signal, async (ctx, call) => {
        const entry = await repairOnEntry(ctx, call, await enterDirectory(ctx));
        return commitLocked(ctx, call, entry, Buffer.from(request.message, 'utf8'));
      });
    },

    async close() {
      for (const context of contexts.values()) {
        context.then((ctx) => ctx.monitor.close()).catch(() => {});
      }
      if (background.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, cfg.closeTimeoutMs);
      });
      await Promise.race([Promise.allSettled([...background]), bound]);
      clearTimeout(timer);
    },
  };
}
