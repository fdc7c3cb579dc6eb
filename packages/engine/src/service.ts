import { realpath, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { sep } from 'node:path';
import {
  type CommitRefusal,
  compareUtf8,
  DomainError,
  engineDetailFor,
  isDomainError,
  type PathSets,
  type SuccessResult,
} from '@slivingdoc/envelope';
import { isValidAuthorName } from '@slivingdoc/merge';
import {
  checkMessage,
  createPathPolicy,
  type PathPolicy,
  parseRequestPath,
  resolveRequestPath,
} from '@slivingdoc/policy';
import type { Manifest } from '@slivingdoc/store';
import {
  ChangeMonitor,
  hasStateRecord,
  openPrivateState,
  openRegistry,
} from '@slivingdoc/workspace';
import { DEFAULT_ACTOR } from './actor';
import { type EngineConfig, resolveConfig } from './config';
import { EngineConfigError } from './config-error';
import { type CallState, type DirContext, newCall, TreeCache } from './context';
import { classifyKnown, engineFailure, failureSite, isAbort, localFailure } from './errors';
import { runCheckpoint } from './notebook/checkpoint';
import {
  directoryRoots,
  enterPrivateState,
  maintainObjects,
  type RecordRoots,
  unopenedDirectoryRoots,
} from './notebook/consolidation';
import {
  type PublicationRecord,
  readHistory,
  retainedIncrements,
  withRetainedObjects,
} from './notebook/history';
import {
  asText,
  type BlameLine,
  blameLines,
  commitsUpTo,
  fileNotFound,
  filteredHistory,
  incrementAt,
  type PublicationDetail,
  publicationDetail,
  stateAtIncrement,
} from './notebook/inspect';
import {
  claimSharedObjects,
  directoryObjects,
  type NotebookObjects,
  type SharedObjectsClaim,
} from './notebook/objects';
import { holdsHead, readCurrent } from './notebook/remote';
import { commitLocked } from './participant/commit';
import { pullLocked } from './participant/pull';
import { revertLocked } from './participant/revert';
import { type NotebookStatus, notPulledStatus, statusLocked } from './participant/status';
import { conflictIssues, type Entry, enterDirectory, synchronize } from './participant/sync';
import { holdsUnpublishedEdits } from './participant/unpublished';
import { type ProgressListener, withProgress } from './progress';
import { type ApproveResult, approveLocked } from './review/decide';
import { commitReviewed, pullReviewed, type ReviewCaller, reviewApplies } from './review/propose';
import type { ReviewMode } from './review/setting';
import { ReviewReader } from './review/store-io';
import {
  mergeConflict,
  notPulled,
  outsideTokenDir,
  readOnlySession,
  readOnlyStore,
  resyncPending,
} from './verdicts';

/** A pull request: the path is the caller's raw string (decoded, not yet resolved). */
export interface PullRequest {
  path?: string;
  signal?: AbortSignal;
  /** Told how many files were scanned and written so far (for a progress display). */
  onProgress?: ProgressListener;
}

/** A commit request: the message is kept byte for byte. */
export interface CommitRequest {
  message: string;
  path?: string;
  signal?: AbortSignal;
  /**
   * The participant publishing (contract §9): the author name of the commit, 1–64 bytes of UTF-8
   * without control characters, `<` or `>` (else INVALID_REQUEST · INVALID_ARGUMENTS).
   * Absent: `slivingdoc`.
   */
  actor?: string;
  /** Told how many files were scanned and written so far (for a progress display). */
  onProgress?: ProgressListener;
  /**
   * True for an agent's commit through the MCP tools: the notebook's review setting applies
   * (docs/review.md). Absent: a person's commit (the CLI), never queued.
   */
  viaTools?: boolean;
}

/** `proposals approve` (docs/review.md): published through this clean, pulled directory. */
export interface ApproveRequest {
  id: string;
  path?: string;
  /** The approver (the CLI's actor, the view's person). */
  actor: string;
  /** The revision the reviewer saw; absent: the current one. */
  revision?: number;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
}

/** A status request (read-only). */
export interface StatusRequest {
  path?: string;
  signal?: AbortSignal;
}

/** A log request: the latest `limit` publications of the retained history. */
export interface LogRequest {
  path?: string;
  /** How many publications, newest first (≥ 1). */
  limit: number;
  /** Per-file insertions and deletions of each publication. */
  stat?: boolean;
  signal?: AbortSignal;
}

/** The retained history as `log` returns it. */
export interface HistoryResult {
  /** The directory (realpath). */
  path: string;
  /** The manifest generation of `current` (0: the store holds no notebook yet). */
  generation: number;
  /** Newest first. */
  publications: PublicationRecord[];
}

/** A history request: one page of the retained history, filtered by actor and path. */
export interface HistoryRequest {
  path?: string;
  /** Publications per page, newest first (≥ 1). */
  limit: number;
  /** Matching publications to skip (≥ 0). */
  offset?: number;
  /** Only publications whose actor is exactly this. */
  actor?: string;
  /** Only publications that changed this notebook file, or a file below this folder. */
  file?: string;
  signal?: AbortSignal;
}

/** One page of the history, each publication with its diffstat (`files`). */
export interface HistoryPage extends HistoryResult {
  /** Whether older matching publications follow. */
  more: boolean;
  /**
   * The generations through which each retained checkpoint compacted the history, newest
   * first: before the oldest of them, nothing is retained.
   */
  checkpoints: number[];
}

/** A read of one retained state: `generation` absent means the accepted one. */
export interface StateRequest {
  path?: string;
  generation?: number;
  signal?: AbortSignal;
}

/** A read of one notebook file (path relative to the notebook, `/`-separated). */
export interface FileRequest extends StateRequest {
  file: string;
}

/** The notebook's files at one generation (`generation` 0: the store holds no notebook). */
export interface NotebookFiles {
  generation: number;
  /** Notebook paths in UTF-8 byte order. */
  files: string[];
}

/** One file's bytes at one generation. */
export interface NotebookFile {
  generation: number;
  file: string;
  content: Uint8Array;
}

/** Line attribution of one text file at one generation. */
export interface BlameResult {
  path: string;
  /** The generation blamed (the accepted one unless asked). */
  generation: number;
  file: string;
  lines: BlameLine[];
}

/** One publication with its members' diffs. */
export interface PublicationResult extends PublicationDetail {
  /** The accepted generation when it was read. */
  storeGeneration: number;
}

/** A revert request: undo publication `generation` (a chain position `log` lists). */
export interface RevertRequest {
  generation: number;
  path?: string;
  /** Default: `Revert generation N: <first line of N's message>`. */
  message?: string;
  /** As for a commit. */
  actor?: string;
  /**
   * What a conflicting revert does: `markers` (the CLI) leaves marker blocks in the copy;
   * `refuse` (the view) changes nothing and only reports the conflicting files and ranges.
   */
  onConflict?: 'markers' | 'refuse';
  signal?: AbortSignal;
  onProgress?: ProgressListener;
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
  /**
   * Why every commit and revert of this participant is refused, if one is: `token` (a
   * read-only session) or `store` (the store's credentials can only read).
   */
  readonly commitsRefused: CommitRefusal | undefined;
  pull(request: PullRequest): Promise<SuccessResult>;
  commit(request: CommitRequest): Promise<SuccessResult>;
  /**
   * The directory's state, its unpublished changes and how far it is behind the store.
   * Read-only: reads `current` only, never rewrites L or records a baseline.
   */
  status(request: StatusRequest): Promise<NotebookStatus>;
  /**
   * The latest publications of the retained history, newest first (INVALID_REQUEST ·
   * NOT_PULLED before a pull). Fetches only the packs P lacks; never rewrites L or the baseline.
   */
  log(request: LogRequest): Promise<HistoryResult>;
  /**
   * Publishes the inverse of one retained publication, merged onto R, through the directory's
   * clean copy: OK as a commit, CONTENT_CONFLICT with markers in the copy, INVALID_REQUEST ·
   * UNPUBLISHED_EDITS or GENERATION_NOT_RETAINED.
   */
  revert(request: RevertRequest): Promise<SuccessResult>;
  /**
   * Approves a proposal (docs/review.md): merged onto R through the directory's clean copy and
   * published once, authored by the proposing agent; the approver is recorded in the proposal.
   */
  approve(request: ApproveRequest): Promise<ApproveResult>;
  /** Whether the notebook's review setting may queue this participant's tool commits now. */
  reviewApplies(request?: { actor?: string | undefined; signal?: AbortSignal }): Promise<boolean>;
  /**
   * The generation of the latest publication (0: none yet), as `log` numbers them; reads only
   * `current`. A checkpoint, which publishes nothing, does not change it.
   */
  acceptedGeneration(signal?: AbortSignal): Promise<number>;
  /** One page of the retained history, filtered (reads as `log` does). */
  history(request: HistoryRequest): Promise<HistoryPage>;
  /** One retained publication with each member's per-file unified diff. */
  publication(request: StateRequest & { generation: number }): Promise<PublicationResult>;
  /** The notebook's files at a retained generation (the accepted one by default). */
  files(request: StateRequest): Promise<NotebookFiles>;
  /** One file's bytes at a retained generation (INVALID_REQUEST · FILE_NOT_FOUND if absent). */
  readFile(request: FileRequest): Promise<NotebookFile>;
  /** Which publication last changed each line of a text file, over the retained history. */
  blame(request: FileRequest): Promise<BlameResult>;
  /**
   * The directories below the workspace root that this service's private root manages, and
   * those of them holding unpublished edits (changes not yet accepted, files that are not
   * notebook state, or a pending repair; a directory that cannot be checked counts as holding
   * some). Lets an embedder decide whether a directory may be deleted. `under`: only the
   * directories at or below it (default: the workspace root).
   */
  localChanges(under?: string): Promise<{ managed: string[]; unpublished: string[] }>;
  /** Waits for background checkpoints (bounded) and releases every lock. */
  close(): Promise<void>;
  /**
   * A participant of this same notebook service (an HTTP session): its own default directory
   * and path sets, sharing every directory's handles, locks and the object caches with the
   * service and its other sessions. A `commitRefused` session answers every commit and revert
   * with READ_ONLY_SESSION · TOKEN_READ_ONLY. Its `close` and `session` are the service's.
   */
  session(options: SessionOptions): Promise<NotebookService>;
  /**
   * Drops `dir` (a realpath) from this service: closes its handles and deletes its private
   * state, so the directory itself can be removed. Only for a directory that holds nothing
   * unpublished (see {@link localChanges}); waits for its lock.
   */
  forget(dir: string): Promise<void>;
}

/** What makes a session differ from the service it belongs to. */
export interface SessionOptions {
  /** The session's default directory (at or below the workspace root; created on first pull). */
  notebookDir: string;
  /** Replace the service's writable and read-only path sets when either is given. */
  writable?: string[];
  readOnly?: string[];
  /** True: every commit and revert is refused (a read-only token). */
  commitRefused?: boolean;
  /**
   * The session's actor is authenticated (a hub token), so the review setting's actor rules
   * bind it; `floor: 'queue'` queues its every tool commit (`token add --review queue`).
   */
  review?: { authenticated: boolean; floor?: ReviewMode };
  /**
   * True: every call may address only `notebookDir` and below (an HTTP token's own directory);
   * any other path is INVALID_REQUEST · PATH_OUTSIDE_TOKEN_DIR before anything is read or made.
   */
  confined?: boolean;
}

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
  const contexts = new Map<string, Promise<DirContext>>();
  /** The contexts opened so far, by directory (their roots are a shared database's roots). */
  const opened = new Map<string, DirContext>();
  let sharedClaim: Promise<SharedObjectsClaim | undefined> | undefined;
  /** Aborted by `close()`: a claim still waiting for another holder gives up. */
  const closing = new AbortController();
  const background = new Set<Promise<unknown>>();
  let checkpointRunning = false;
  const reviewReader = new ReviewReader(cfg.store);

  async function openContext(dir: string): Promise<DirContext> {
    const priv = await openPrivateState({
      privateRoot: cfg.privateRoot,
      notebookDir: dir,
      storageIdentity: cfg.store.identity,
    });
    const claim = cfg.sharedObjects ? await claimShared() : undefined;
    const objects = claim?.objects ?? (await directoryObjects(priv.dir, priv.gitdir));
    const ctx: DirContext = {
      cfg,
      policy: processPolicy,
      registry,
      dir,
      priv,
      monitor: new ChangeMonitor(dir),
      objects,
      db: objects.db,
      trees: new TreeCache(),
      onPublished: (activeIncrements) => scheduleCheckpoint(dir, activeIncrements),
    };
    opened.set(dir, ctx);
    return ctx;
  }

  /**
   * The store-level object database, claimed once per service (docs/engine.md "One object
   * database per store"); undefined when another process holds it or it cannot be opened,
   * logged once: every directory then keeps its own.
   */
  function claimShared(): Promise<SharedObjectsClaim | undefined> {
    sharedClaim ??= claimSharedObjects(cfg.privateRoot, cfg.store.identity, {
      timeoutMs: cfg.lockTimeoutMs,
      signal: closing.signal,
    })
      .catch((err: unknown) => {
        const code = (err as NodeJS.ErrnoException | undefined)?.code;
        cfg.logger.warn(
          { code: typeof code === 'string' ? code : 'UNKNOWN' },
          'the shared object database cannot be opened',
        );
        return undefined;
      })
      .then((claim) => {
        // A wait ended by close() is no fallback worth a record.
        if (claim === undefined && !closing.signal.aborted)
          cfg.logger.info(
            { sharedObjects: false },
            'the object database is not shared: another process holds it; each directory keeps its own',
          );
        return claim;
      });
    return sharedClaim;
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

  /**
   * What every directory using `ctx`'s database names: that directory alone for its own
   * database; for the shared one, every directory this service opened and the records of
   * every other managed directory (a hub restarted after a kill has not opened them yet).
   */
  async function directoriesOf(ctx: DirContext, into: RecordRoots): Promise<void> {
    if (!ctx.objects.shared) return directoryRoots(ctx, into);
    for (const other of opened.values())
      if (other.objects === ctx.objects) await directoryRoots(other, into);
    for (const dir of await registry.list().catch(() => [])) {
      if (opened.has(dir)) continue;
      await unopenedDirectoryRoots(
        { privateRoot: cfg.privateRoot, notebookDir: dir, storageIdentity: cfg.store.identity },
        into,
      );
    }
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
   * Consolidates the directory's object database after a call (so the call's answer does not
   * wait for it), at most one pending per database, tracked so close() waits for it. It holds
   * the database exclusively: it waits for every call of every directory using it, and calls
   * arriving meanwhile wait for it. A directory's own database is also used by other processes
   * serving that directory: its lock is taken first; a shared one is this process's alone.
   */
  function scheduleMaintenance(ctx: DirContext): void {
    const { objects } = ctx;
    if (objects.upkeep.scheduled) return;
    // Nothing due: no reason to stop the calls of every directory using the database.
    if (!cfg.consolidateAlways && !dueOrUnknown(objects)) return;
    objects.upkeep.scheduled = true;
    const run = (async () => {
      const releaseDir = objects.shared
        ? undefined
        : await ctx.priv.lock({ timeoutMs: cfg.lockTimeoutMs });
      try {
        const release = await objects.access.exclusive();
        try {
          objects.upkeep.scheduled = false;
          await enterPrivateState(ctx);
          await maintainObjects(objects, cfg, (into) => directoriesOf(ctx, into));
        } finally {
          release();
        }
      } finally {
        await releaseDir?.();
      }
    })()
      // A busy directory (lock timeout) is consolidated after a later call.
      .catch(() => undefined)
      .finally(() => {
        objects.upkeep.scheduled = false;
        background.delete(run);
      });
    background.add(run);
  }

  /** Whether the database's thresholds are crossed (a listing that fails: let it try). */
  function dueOrUnknown(objects: NotebookObjects): boolean {
    try {
      return objects.db.consolidationDue();
    } catch {
      return true;
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
      const shared = await contextFor(dir);
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
      if (opts.maintain === true) scheduleMaintenance(ctx);
    }
  }

  /** contract §10: stop, try to rebuild L and P from `current`, report what happened. */
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
    // A full disk (or another catalogued local cause) that also stopped the repair is the
    // operator's to fix: say which side and why, not "unexpected" (the flag stays for later).
    if (!resynchronized && engineDetailFor(cause) !== undefined) {
      return localFailure(cause, failureSite(ctx, failed, cause), failed.remoteAccepted);
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

  async function fileAt(ctx: DirContext, manifest: Manifest | undefined, request: FileRequest) {
    checkGeneration(request.generation);
    const found = incrementAt(manifest, request.generation);
    const generation = Number(found?.increment.generation ?? 0n);
    const oid =
      found === undefined
        ? undefined
        : (await stateAtIncrement(ctx, found.increment)).get(request.file);
    if (oid === undefined) throw fileNotFound(request.file, generation);
    return { generation, content: await ctx.db.readBlob(oid) };
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
          async (ctx) => {
            const current = await readCurrentClassified();
            const publications =
              current === undefined
                ? []
                : await withRetainedObjects(ctx, current.manifest, () =>
                    readHistory(ctx, current.manifest, {
                      limit: request.limit,
                      stat: request.stat ?? false,
                    }),
                  );
            return {
              path: ctx.dir,
              generation: Number(current?.manifest.generation ?? 0n),
              publications,
            };
          },
          MAINTAIN,
        );
      },

      async revert(request) {
        const raw = request.path;
        parseRequestPath(raw, { home: cfg.home });
        if (request.message !== undefined) checkMessage(request.message);
        checkActor(request.actor);
        refuseCommits();
        if (!Number.isSafeInteger(request.generation) || request.generation < 1) {
          throw invalidArguments('the generation must be a whole number of at least 1');
        }
        const dir = await resolve(raw, false);
        if (!(await isPulled(dir))) throw notPulled();
        return guarded(
          policy,
          dir,
          request,
          async (ctx, call) => {
            const entry = await repairOnEntry(ctx, call, await enterDirectory(ctx));
            return revertLocked(ctx, call, entry, BigInt(request.generation), {
              message: request.message,
              refuseConflicts: request.onConflict === 'refuse',
            });
          },
          MAINTAIN,
        );
      },

      async approve(request) {
        parseRequestPath(request.path, { home: cfg.home });
        checkActor(request.actor);
        refuseCommits();
        const dir = await resolve(request.path, false);
        if (!(await isPulled(dir))) throw notPulled();
        return guarded(
          policy,
          dir,
          request,
          async (ctx, call) => {
            const entry = await repairOnEntry(ctx, call, await enterDirectory(ctx));
            return approveLocked(ctx, call, entry, {
              id: request.id,
              by: request.actor,
              revision: request.revision,
            });
          },
          MAINTAIN,
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
        return reading(resolve, policy, request, async (ctx, current) => {
          const manifest = current?.manifest;
          const page =
            manifest === undefined
              ? { publications: [], more: false }
              : await filteredHistory(ctx, manifest, {
                  offset,
                  limit: request.limit,
                  actor: request.actor,
                  file: request.file,
                });
          const checkpoints =
            manifest === undefined
              ? []
              : [manifest, ...manifest.retained].map((chain) =>
                  Number(chain.checkpoint.throughGeneration),
                );
          return {
            path: ctx.dir,
            generation: Number(manifest?.generation ?? 0n),
            ...page,
            checkpoints,
          };
        });
      },

      async publication(request) {
        checkGeneration(request.generation);
        return reading(resolve, policy, request, async (ctx, current) => ({
          ...(await publicationDetail(ctx, current?.manifest, request.generation)),
          storeGeneration: Number(current?.manifest.generation ?? 0n),
        }));
      },

      async files(request) {
        checkGeneration(request.generation);
        return reading(resolve, policy, request, async (ctx, current) => {
          const found = incrementAt(current?.manifest, request.generation);
          if (found === undefined) return { generation: 0, files: [] };
          const entries = await stateAtIncrement(ctx, found.increment);
          return {
            generation: Number(found.increment.generation),
            files: [...entries.keys()].sort(compareUtf8),
          };
        });
      },

      async readFile(request) {
        return reading(resolve, policy, request, async (ctx, current) => ({
          file: request.file,
          ...(await fileAt(ctx, current?.manifest, request)),
        }));
      },

      async blame(request) {
        return reading(resolve, policy, request, async (ctx, current) => {
          const { generation, content } = await fileAt(ctx, current?.manifest, request);
          if (asText(content) === undefined || current === undefined)
            throw fileNotFound(request.file, generation);
          const commits = await commitsUpTo(ctx, current.manifest, generation);
          const lines = await blameLines(ctx, commits, request.file);
          if (lines === undefined) throw fileNotFound(request.file, generation);
          return { path: ctx.dir, generation, file: request.file, lines };
        });
      },

      localChanges,
      close,
      session: openSession,
      forget,
    };
  }

  async function localChanges(under: string = workspaceRoot) {
    const managed = (await registry.list()).filter(
      (dir) => isAtOrBelow(dir, workspaceRoot) && isAtOrBelow(dir, under),
    );
    const unpublished: string[] = [];
    for (const dir of managed) {
      const held = await contextFor(dir)
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

  async function close() {
    closing.abort();
    for (const context of contexts.values()) {
      context.then((ctx) => ctx.monitor.close()).catch(() => {});
    }
    if (background.size === 0) return releaseShared();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, cfg.closeTimeoutMs);
    });
    await Promise.race([Promise.allSettled([...background]), bound]);
    clearTimeout(timer);
    await releaseShared();
  }

  /** Gives up the claim on the shared object database (the next holder may prune it). */
  async function releaseShared(): Promise<void> {
    const claim = await sharedClaim;
    sharedClaim = undefined;
    await claim?.release();
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

  async function forget(dir: string): Promise<void> {
    const ctx = await contextFor(dir);
    const release = await ctx.priv.lock({ timeoutMs: cfg.lockTimeoutMs });
    try {
      ctx.monitor.close();
      contexts.delete(dir);
      // Its objects in a shared database go at the next consolidation.
      opened.delete(dir);
      await rm(ctx.priv.dir, { recursive: true, force: true });
    } finally {
      await release();
    }
  }

  // Claimed from the start, so a restarted hub's wait for its exiting predecessor overlaps
  // its start-up instead of its first call.
  if (cfg.sharedObjects) void claimShared();
  return participant(processNotebookDir, processPolicy, false, false);
}
