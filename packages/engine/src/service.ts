import { realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { sep } from 'node:path';
import { type CommitRefusal, DomainError, isDomainError } from '@slivingdoc/envelope';
import { isValidAuthorName } from '@slivingdoc/merge';
import {
  checkMessage,
  createPathPolicy,
  type PathPolicy,
  parseRequestPath,
  resolveRequestPath,
} from '@slivingdoc/policy';
import { hasStateRecord, openRegistry } from '@slivingdoc/workspace';
import { DEFAULT_ACTOR } from './actor';
import type { NotebookService, SessionOptions } from './api';
import { type EngineConfig, resolveConfig } from './config';
import { EngineConfigError } from './config-error';
import { type CallState, type DirContext, newCall } from './context';
import { Directories } from './directories';
import { classifyKnown, engineFailure, failureSite, isAbort } from './errors';
import { enterPrivateState } from './notebook/consolidation';
import { retainedIncrements, withRetainedObjects } from './notebook/history';
import { blameOf, fileAt, filesAt, historyPageOf, logOf, publicationOf } from './notebook/reads';
import { readCurrent } from './notebook/remote';
import { commitLocked } from './participant/commit';
import { pullLocked } from './participant/pull';
import { repairAfterFailure, repairOnEntry } from './participant/repair';
import { revertLocked } from './participant/revert';
import { notPulledStatus, statusLocked } from './participant/status';
import { type Entry, enterDirectory } from './participant/sync';
import { holdsUnpublishedEdits } from './participant/unpublished';
import { type ProgressListener, withProgress } from './progress';
import { approveLocked } from './review/decide';
import { commitReviewed, pullReviewed, type ReviewCaller, reviewApplies } from './review/propose';
import { ReviewReader } from './review/store-io';
import {
  notPulled,
  outsideTokenDir,
  readOnlySession,
  readOnlyStore,
  resyncPending,
} from './verdicts';

/** INVALID_REQUEST · INVALID_ARGUMENTS with a short reason. */
function invalidArguments(why: string): DomainError {
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'INVALID_ARGUMENTS',
    message: `Invalid arguments: ${why}.`,
  });
}

/** The calls after which P is consolidated when it grew past the thresholds. */
const MAINTAIN = { maintain: true };

/** contract §9: an actor is a valid commit author name. */
function checkActor(actor: string | undefined): void {
  if (actor !== undefined && !isValidAuthorName(actor)) {
    throw invalidArguments(
      'the actor must be 1–64 bytes of UTF-8 without control characters, < or >',
    );
  }
}

function isAtOrBelow(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

async function existingDirectory(path: string): Promise<string> {
  const info = await stat(path).catch((cause: unknown) => {
    throw new EngineConfigError('workspaceRoot', `the workspace root ${path} does not exist`, {
      cause,
    });
  });
  if (!info.isDirectory())
    throw new EngineConfigError('workspaceRoot', `the workspace root ${path} is not a directory`);
  return realpath(path);
}

async function realpathOrSelf(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}

/**
 * Opens a notebook service. Throws `RangeError` on a setting out of range, the policy's
 * `PathSetError` on invalid path sets, and {@link EngineConfigError} when `workspaceRoot`
 * does not exist or is not a directory. Resolves the workspace root and the notebook
 * directory with `realpath` once; creates nothing and touches no store (the first pull
 * creates what it needs).
 */
export async function createNotebookService(config: EngineConfig): Promise<NotebookService> {
  const cfg = resolveConfig(config, homedir());
  const processPolicy = createPathPolicy({ writable: cfg.writable, readOnly: cfg.readOnly });
  const workspaceRoot = await existingDirectory(cfg.workspaceRoot);
  const processNotebookDir = await realpathOrSelf(cfg.notebookDir);
  const registry = openRegistry(cfg.privateRoot);
  const directories = new Directories(cfg, processPolicy, registry);
  const reviewReader = new ReviewReader(cfg.store);

  async function resolveDir(
    notebookDir: string,
    raw: string | undefined,
    create: boolean,
    confined = false,
  ): Promise<string> {
    const requested = parseRequestPath(raw, { home: cfg.home });
    // Lexical is enough: no component below the workspace root may be a link (resolveRequestPath).
    if (confined && requested !== undefined && !isAtOrBelow(requested, notebookDir))
      throw outsideTokenDir(requested, notebookDir);
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
  async function guarded<T>(
    policy: PathPolicy,
    dir: string,
    request: { signal?: AbortSignal; actor?: string; onProgress?: ProgressListener },
    work: (ctx: DirContext, call: CallState) => Promise<T>,
    opts: { maintain?: boolean } = {},
  ): Promise<T> {
    const { signal } = request;
    let ctx: DirContext;
    try {
      const shared = await directories.contextFor(dir);
      // The directory's handles are shared; the path sets are the calling participant's.
      ctx = shared.policy === policy ? shared : { ...shared, policy };
    } catch (err) {
      throw classifyKnown(err) ?? engineFailure(err, 'private');
    }
    const release = await ctx.priv
      .lock({ timeoutMs: cfg.lockTimeoutMs, ...(signal === undefined ? {} : { signal }) })
      .catch((err: unknown) => {
        if (isAbort(err, signal)) throw err;
        throw classifyKnown(err) ?? engineFailure(err, 'private');
      });
    // Held for the whole call: a consolidation of the database waits for it.
    const hold = await ctx.objects.access.shared();
    const call = newCall(signal, request.actor);
    try {
      await enterPrivateState(ctx);
      const result = await withProgress(request.onProgress, () => work(ctx, call));
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
      throw engineFailure(err, failureSite(ctx, call, err));
    } finally {
      hold();
      await release();
      if (opts.maintain === true) directories.scheduleMaintenance(ctx);
    }
  }

  /** True once the directory has a state record: it was pulled (or a first pull failed midway). */
  async function isPulled(dir: string): Promise<boolean> {
    if ((await registry.list()).includes(dir)) return true;
    return hasStateRecord({
      privateRoot: cfg.privateRoot,
      notebookDir: dir,
      storageIdentity: cfg.store.identity,
    });
  }

  /** `current`, with a store failure mapped onto the catalogue. */
  async function readCurrentClassified() {
    try {
      return await readCurrent(cfg.store);
    } catch (err) {
      throw classifyKnown(err) ?? engineFailure(err, 'private');
    }
  }

  /** Runs a read of the retained history from a pulled directory's private state. */
  async function reading<T>(
    resolve: (raw: string | undefined, create: boolean) => Promise<string>,
    policy: PathPolicy,
    request: { path?: string; signal?: AbortSignal },
    work: (ctx: DirContext, current: Awaited<ReturnType<typeof readCurrent>>) => Promise<T>,
  ): Promise<T> {
    const dir = await resolve(request.path, false);
    if (!(await isPulled(dir))) throw notPulled();
    return guarded(policy, dir, request, async (ctx) => {
      const current = await readCurrentClassified();
      return withRetainedObjects(ctx, current?.manifest, () => work(ctx, current));
    });
  }

  function checkGeneration(generation: number | undefined): void {
    if (generation !== undefined && (!Number.isSafeInteger(generation) || generation < 1))
      throw invalidArguments('the generation must be a whole number of at least 1');
  }

  function participant(
    notebookDir: string,
    policy: PathPolicy,
    commitRefused: boolean,
    confined: boolean,
    review: SessionOptions['review'] = { authenticated: false },
  ): NotebookService {
    const callerOf = (actor: string | undefined): ReviewCaller => ({
      actor: actor ?? DEFAULT_ACTOR,
      authenticated: review.authenticated,
      floor: review.floor,
    });
    const resolve = (raw: string | undefined, create: boolean): Promise<string> =>
      resolveDir(notebookDir, raw, create, confined);
    const refusal: CommitRefusal | undefined = commitRefused
      ? 'token'
      : cfg.readOnlyStore
        ? 'store'
        : undefined;
    /** Refuses a commit or revert of a read-only participant, before anything is read. */
    const refuseCommits = () => {
      if (refusal === 'token') throw readOnlySession();
      if (refusal === 'store') throw readOnlyStore();
    };
    /**
     * A person's write through a clean, pulled directory (revert, approve): the path, the actor,
     * a read-only participant and the request's own arguments are checked before anything is
     * read; then the directory is repaired if it must be and `work` runs under its lock.
     */
    const personsWrite = async <T>(
      request: { path?: string | undefined; actor?: string; signal?: AbortSignal },
      checkArguments: () => void,
      work: (ctx: DirContext, call: CallState, entry: Entry) => Promise<T>,
    ): Promise<T> => {
      parseRequestPath(request.path, { home: cfg.home });
      checkActor(request.actor);
      refuseCommits();
      checkArguments();
      const dir = await resolve(request.path, false);
      if (!(await isPulled(dir))) throw notPulled();
      return guarded(
        policy,
        dir,
        request,
        async (ctx, call) =>
          work(ctx, call, await repairOnEntry(ctx, call, await enterDirectory(ctx))),
        MAINTAIN,
      );
    };
    return {
      sets: policy.sets,
      notebookDir,
      commitsRefused: refusal,

      async pull(request) {
        const dir = await resolve(request.path, true);
        return guarded(
          policy,
          dir,
          request,
          async (ctx, call) => {
            const entry = await enterDirectory(ctx);
            try {
              return await pullReviewed(ctx, entry, (from) => pullLocked(ctx, call, from));
            } catch (err) {
              const known = classifyKnown(err);
              const flagged = entry.repairPending && !entry.stateMissing;
              if (flagged && !call.mutationStarted && known?.code === 'STORAGE_FAILURE')
                throw resyncPending(err);
              throw err;
            }
          },
          MAINTAIN,
        );
      },

      async commit(request) {
        const raw = request.path;
        parseRequestPath(raw, { home: cfg.home });
        checkMessage(request.message);
        checkActor(request.actor);
        refuseCommits();
        const dir = await resolve(raw, false);
        if (!(await registry.list()).includes(dir)) {
          // contract §2 order: lock, pending repair, then NOT_PULLED. Without a state record there
          // is nothing to repair and nothing is created; with one (a first pull that failed
          // while rewriting L), the repair runs under the lock first.
          const location = {
            privateRoot: cfg.privateRoot,
            notebookDir: dir,
            storageIdentity: cfg.store.identity,
          };
          if (!(await hasStateRecord(location))) throw notPulled();
          return guarded(policy, dir, request, async (ctx, call) => {
            await repairOnEntry(ctx, call, await enterDirectory(ctx));
            throw notPulled();
          });
        }
        return guarded(
          policy,
          dir,
          request,
          async (ctx, call) => {
            const entry = await repairOnEntry(ctx, call, await enterDirectory(ctx));
            const message = Buffer.from(request.message, 'utf8');
            if (request.viaTools !== true) return commitLocked(ctx, call, entry, message);
            return commitReviewed(
              ctx,
              call,
              entry,
              message,
              callerOf(request.actor),
              reviewReader,
              async (from) => {
                await pullLocked(ctx, call, from);
                return enterDirectory(ctx);
              },
            );
          },
          MAINTAIN,
        );
      },

      async status(request) {
        const dir = await resolve(request.path, false);
        const current = await readCurrentClassified();
        if (!(await isPulled(dir))) return notPulledStatus(dir, current?.manifest);
        return guarded(policy, dir, request, async (ctx) =>
          statusLocked(ctx, await enterDirectory(ctx), current?.manifest),
        );
      },

      async log(request) {
        if (!Number.isSafeInteger(request.limit) || request.limit < 1) {
          throw invalidArguments('the number of publications must be a whole number of at least 1');
        }
        const dir = await resolve(request.path, false);
        if (!(await isPulled(dir))) throw notPulled();
        return guarded(
          policy,
          dir,
          request,
          async (ctx) => logOf(ctx, await readCurrentClassified(), request),
          MAINTAIN,
        );
      },

      revert(request) {
        const checkArguments = () => {
          if (request.message !== undefined) checkMessage(request.message);
          if (!Number.isSafeInteger(request.generation) || request.generation < 1) {
            throw invalidArguments('the generation must be a whole number of at least 1');
          }
        };
        return personsWrite(request, checkArguments, (ctx, call, entry) =>
          revertLocked(ctx, call, entry, BigInt(request.generation), {
            message: request.message,
            refuseConflicts: request.onConflict === 'refuse',
          }),
        );
      },

      approve(request) {
        return personsWrite(
          request,
          () => undefined,
          (ctx, call, entry) =>
            approveLocked(ctx, call, entry, {
              id: request.id,
              by: request.actor,
              revision: request.revision,
            }),
        );
      },

      async reviewApplies(request = {}) {
        request.signal?.throwIfAborted();
        try {
          return reviewApplies(await reviewReader.read(), callerOf(request.actor));
        } catch (err) {
          throw classifyKnown(err) ?? engineFailure(err, 'local');
        }
      },

      async acceptedGeneration(signal) {
        signal?.throwIfAborted();
        const manifest = (await readCurrentClassified())?.manifest;
        return Number(
          (manifest === undefined ? undefined : retainedIncrements(manifest)[0])?.generation ?? 0n,
        );
      },

      async history(request) {
        const offset = request.offset ?? 0;
        if (!Number.isSafeInteger(request.limit) || request.limit < 1)
          throw invalidArguments('the number of publications must be a whole number of at least 1');
        if (!Number.isSafeInteger(offset) || offset < 0)
          throw invalidArguments('the offset must be a whole number of at least 0');
        return reading(resolve, policy, request, (ctx, current) =>
          historyPageOf(ctx, current, { ...request, offset }),
        );
      },

      async publication(request) {
        checkGeneration(request.generation);
        return reading(resolve, policy, request, (ctx, current) =>
          publicationOf(ctx, current, request.generation),
        );
      },

      async files(request) {
        checkGeneration(request.generation);
        return reading(resolve, policy, request, (ctx, current) =>
          filesAt(ctx, current, request.generation),
        );
      },

      async readFile(request) {
        return reading(resolve, policy, request, async (ctx, current) => {
          checkGeneration(request.generation);
          return { file: request.file, ...(await fileAt(ctx, current?.manifest, request)) };
        });
      },

      async blame(request) {
        return reading(resolve, policy, request, async (ctx, current) => {
          checkGeneration(request.generation);
          return blameOf(ctx, current, request);
        });
      },

      localChanges,
      close: () => directories.close(),
      session: openSession,
      forget: (dir) => directories.forget(dir),
    };
  }

  async function localChanges(under: string = workspaceRoot) {
    const managed = (await registry.list()).filter(
      (dir) => isAtOrBelow(dir, workspaceRoot) && isAtOrBelow(dir, under),
    );
    const unpublished: string[] = [];
    for (const dir of managed) {
      const held = await directories
        .contextFor(dir)
        .then(async (ctx) => {
          const release = await ctx.priv.lock({ timeoutMs: cfg.lockTimeoutMs });
          const hold = await ctx.objects.access.shared();
          try {
            return await holdsUnpublishedEdits(ctx);
          } finally {
            hold();
            await release();
          }
        })
        .catch(() => true);
      if (held) unpublished.push(dir);
    }
    return { managed, unpublished };
  }

  async function openSession(options: SessionOptions): Promise<NotebookService> {
    const replaced = options.writable !== undefined || options.readOnly !== undefined;
    const policy = replaced
      ? createPathPolicy({ writable: options.writable ?? [], readOnly: options.readOnly ?? [] })
      : processPolicy;
    const dir = await realpathOrSelf(options.notebookDir);
    if (!isAtOrBelow(dir, workspaceRoot))
      throw new EngineConfigError(
        'notebookDir',
        `the session directory ${dir} is outside the workspace root`,
      );
    return participant(
      dir,
      policy,
      options.commitRefused ?? false,
      options.confined ?? false,
      options.review,
    );
  }

  // Claimed from the start, so a restarted hub's wait for its exiting predecessor overlaps
  // its start-up instead of its first call.
  if (cfg.sharedObjects) void directories.claimShared();
  return participant(processNotebookDir, processPolicy, false, false);
}
