/**
 * The directories one service serves: each directory's context (its private state, change
 * monitor and object database), opened once and shared by every participant of the service; the
 * store-level object database they share when `sharedObjects` is on (docs/engine.md, "One object
 * database per store"); and the background work after calls (checkpoints, consolidation), which
 * `close()` waits for, bounded.
 */
import { rm } from 'node:fs/promises';
import type { PathPolicy } from '@slivingdoc/policy';
import { ChangeMonitor, openPrivateState, type Registry } from '@slivingdoc/workspace';
import type { ResolvedConfig } from './config';
import { type DirContext, TreeCache } from './context';
import { runCheckpoint } from './notebook/checkpoint';
import {
  directoryRoots,
  enterPrivateState,
  maintainObjects,
  type RecordRoots,
  unopenedDirectoryRoots,
} from './notebook/consolidation';
import {
  claimSharedObjects,
  directoryObjects,
  type NotebookObjects,
  type SharedObjectsClaim,
} from './notebook/objects';

/** Whether the database's thresholds are crossed (a listing that fails: let it try). */
function dueOrUnknown(objects: NotebookObjects): boolean {
  try {
    return objects.db.consolidationDue();
  } catch {
    return true;
  }
}

export class Directories {
  readonly #contexts = new Map<string, Promise<DirContext>>();
  /** The contexts opened so far, by directory (their roots are a shared database's roots). */
  readonly #opened = new Map<string, DirContext>();
  #sharedClaim: Promise<SharedObjectsClaim | undefined> | undefined;
  /** Aborted by `close()`: a claim still waiting for another holder gives up. */
  readonly #closing = new AbortController();
  readonly #background = new Set<Promise<unknown>>();
  #checkpointRunning = false;

  constructor(
    private readonly cfg: ResolvedConfig,
    private readonly policy: PathPolicy,
    private readonly registry: Registry,
  ) {}

  async #open(dir: string): Promise<DirContext> {
    const { cfg } = this;
    const priv = await openPrivateState({
      privateRoot: cfg.privateRoot,
      notebookDir: dir,
      storageIdentity: cfg.store.identity,
    });
    const claim = cfg.sharedObjects ? await this.claimShared() : undefined;
    const objects = claim?.objects ?? (await directoryObjects(priv.dir, priv.gitdir));
    const ctx: DirContext = {
      cfg,
      policy: this.policy,
      registry: this.registry,
      dir,
      priv,
      monitor: new ChangeMonitor(dir),
      objects,
      db: objects.db,
      trees: new TreeCache(),
      onPublished: (activeIncrements) => this.#scheduleCheckpoint(dir, activeIncrements),
    };
    this.#opened.set(dir, ctx);
    return ctx;
  }

  /**
   * The store-level object database, claimed once per service (docs/engine.md "One object
   * database per store"); undefined when another process holds it or it cannot be opened,
   * logged once: every directory then keeps its own.
   */
  claimShared(): Promise<SharedObjectsClaim | undefined> {
    const { cfg } = this;
    const closing = this.#closing.signal;
    this.#sharedClaim ??= claimSharedObjects(cfg.privateRoot, cfg.store.identity, {
      timeoutMs: cfg.lockTimeoutMs,
      signal: closing,
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
        if (claim === undefined && !closing.aborted)
          cfg.logger.info(
            { sharedObjects: false },
            'the object database is not shared: another process holds it; each directory keeps its own',
          );
        return claim;
      });
    return this.#sharedClaim;
  }

  /** The context of `dir`, opened on first use. */
  contextFor(dir: string): Promise<DirContext> {
    let context = this.#contexts.get(dir);
    if (context === undefined) {
      context = this.#open(dir);
      context.catch(() => this.#contexts.delete(dir));
      this.#contexts.set(dir, context);
    }
    return context;
  }

  /**
   * What every directory using `ctx`'s database names: that directory alone for its own
   * database; for the shared one, every directory this service opened and the records of
   * every other managed directory (a hub restarted after a kill has not opened them yet).
   */
  async #directoriesOf(ctx: DirContext, into: RecordRoots): Promise<void> {
    if (!ctx.objects.shared) return directoryRoots(ctx, into);
    for (const other of this.#opened.values())
      if (other.objects === ctx.objects) await directoryRoots(other, into);
    for (const dir of await this.registry.list().catch(() => [])) {
      if (this.#opened.has(dir)) continue;
      await unopenedDirectoryRoots(
        {
          privateRoot: this.cfg.privateRoot,
          notebookDir: dir,
          storageIdentity: this.cfg.store.identity,
        },
        into,
      );
    }
  }

  #scheduleCheckpoint(dir: string, activeIncrements: number): void {
    if (activeIncrements < this.cfg.checkpointPacks || this.#checkpointRunning) return;
    this.#checkpointRunning = true;
    const run = this.contextFor(dir)
      .then(runCheckpoint)
      .catch((err: unknown) => this.cfg.logger.warn({ err }, 'checkpoint failed'))
      .finally(() => {
        this.#checkpointRunning = false;
        this.#background.delete(run);
      });
    this.#background.add(run);
  }

  /**
   * Consolidates the directory's object database after a call (so the call's answer does not
   * wait for it), at most one pending per database, tracked so close() waits for it. It holds
   * the database exclusively: it waits for every call of every directory using it, and calls
   * arriving meanwhile wait for it. A directory's own database is also used by other processes
   * serving that directory: its lock is taken first; a shared one is this process's alone.
   */
  scheduleMaintenance(ctx: DirContext): void {
    const { cfg } = this;
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
          await maintainObjects(objects, cfg, (into) => this.#directoriesOf(ctx, into));
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
        this.#background.delete(run);
      });
    this.#background.add(run);
  }

  /** Closes every monitor and waits (bounded) for the background work, then gives up the claim. */
  async close(): Promise<void> {
    this.#closing.abort();
    for (const context of this.#contexts.values()) {
      context.then((ctx) => ctx.monitor.close()).catch(() => {});
    }
    if (this.#background.size === 0) return this.#releaseShared();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.cfg.closeTimeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.#background]), bound]);
    clearTimeout(timer);
    await this.#releaseShared();
  }

  /** Gives up the claim on the shared object database (the next holder may prune it). */
  async #releaseShared(): Promise<void> {
    const claim = await this.#sharedClaim;
    this.#sharedClaim = undefined;
    await claim?.release();
  }

  /** Forgets `dir`: closes its monitor and deletes its private state, under its lock. */
  async forget(dir: string): Promise<void> {
    const ctx = await this.contextFor(dir);
    const release = await ctx.priv.lock({ timeoutMs: this.cfg.lockTimeoutMs });
    try {
      ctx.monitor.close();
      this.#contexts.delete(dir);
      // Its objects in a shared database go at the next consolidation.
      this.#opened.delete(dir);
      await rm(ctx.priv.dir, { recursive: true, force: true });
    } finally {
      await release();
    }
  }
}
