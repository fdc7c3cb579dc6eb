/** Per-directory handles and per-call progress shared by the pull, commit and repair modules. */
import type { RecoveryStage } from '@slivingdoc/envelope';
import {
  CACHE_IDLE_RELEASE_MS,
  IdleRelease,
  type ObjectDb,
  type TreeEntries,
} from '@slivingdoc/merge';
import type { PathPolicy } from '@slivingdoc/policy';
import type { ChangeMonitor, PrivateState, Registry } from '@slivingdoc/workspace';
import type { ResolvedConfig } from './config';
import type { NotebookObjects } from './notebook/objects';

/** Everything the engine holds open for one notebook directory (reused across calls). */
export interface DirContext {
  readonly cfg: ResolvedConfig;
  readonly policy: PathPolicy;
  readonly registry: Registry;
  /** The directory's realpath. */
  readonly dir: string;
  readonly priv: PrivateState;
  /** Watches L so a warm scan lists only directories that changed; closed with the service. */
  readonly monitor: ChangeMonitor;
  /**
   * The object database this directory uses (the service's shared one, or its own in P) with
   * what the process knows about it: verified and pinned heads, pack cache, upkeep.
   */
  readonly objects: NotebookObjects;
  /** `objects.db`. */
  readonly db: ObjectDb;
  readonly trees: TreeCache;
  /** Told after each accepted publication how long the active tail is (schedules checkpoints). */
  readonly onPublished: (activeIncrements: number) => void;
}

/** Progress of one call: what a failure must report and whether L is being rewritten. */
export interface CallState {
  stage: RecoveryStage;
  /** True from setting the recovery flag until the new baseline is durable. */
  mutationStarted: boolean;
  remoteAccepted: 'yes' | 'no' | 'unknown';
  signal: AbortSignal | undefined;
  /** The author name of the commits this call publishes (contract §9); absent: `slivingdoc`. */
  actor?: string | undefined;
}

/** A new call's state. */
export function newCall(signal: AbortSignal | undefined, actor?: string): CallState {
  return { stage: 'scan', mutationStarted: false, remoteAccepted: 'no', signal, actor };
}

/**
 * Flattened trees by tree id. A 10,000-file tree takes noticeable time to read, and the same
 * baseline and remote trees are read by every call on a directory; a handful suffice. The
 * trees are dropped once the cache is unused for `idleMs` (an idle server holds none of
 * them; the next call reads them again); which trees passed the path rules is kept.
 */
export class TreeCache {
  readonly #entries = new Map<string, TreeEntries>();
  /** Trees that passed the path rules, least recently used first, at most {@link VALIDATED_KEPT}. */
  readonly #validated = new Set<string>();
  readonly #idle: IdleRelease;

  constructor(
    private readonly capacity = 4,
    idleMs = CACHE_IDLE_RELEASE_MS,
  ) {
    this.#idle = new IdleRelease(idleMs, () => this.#entries.clear());
  }

  /** The flattened tree `tree` (callers must not mutate the returned map). */
  async read(db: ObjectDb, tree: string): Promise<TreeEntries> {
    this.#idle.touch();
    const hit = this.#entries.get(tree);
    if (hit !== undefined) {
      this.#entries.delete(tree);
      this.#entries.set(tree, hit);
      return hit;
    }
    const entries = await db.readTree(tree);
    this.#keep(tree, entries);
    return entries;
  }

  /**
   * Records the files of a tree this process just had accepted, so the next call neither reads
   * it back nor re-checks its paths: every path came from a scan that applied the path rules
   * or from a validated R, and a merge that would make two collide publishes nothing.
   */
  remember(tree: string, entries: TreeEntries): void {
    this.#idle.touch();
    this.#entries.delete(tree);
    this.#keep(tree, entries);
    this.markValidated(tree);
  }

  #keep(tree: string, entries: TreeEntries): void {
    this.#entries.set(tree, entries);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** True when this remote tree already passed the path rules. */
  isValidated(tree: string): boolean {
    if (!this.#validated.has(tree)) return false;
    this.markValidated(tree);
    return true;
  }

  /** Remembers that this remote tree passed the path rules (evicting the least recent). */
  markValidated(tree: string): void {
    this.#validated.delete(tree);
    this.#validated.add(tree);
    for (const oldest of this.#validated) {
      if (this.#validated.size <= VALIDATED_KEPT) break;
      this.#validated.delete(oldest);
    }
  }

  /** Forgets the flattened trees (their objects may be gone); which trees were valid stays. */
  clear(): void {
    this.#entries.clear();
  }
}

/**
 * Trees remembered as valid. A call checks R's tree (and a repair a target's): a few recent
 * ones are all that is ever asked again; a forgotten one is only checked once more.
 */
export const VALIDATED_KEPT = 256;

/** The empty tree's git id: the baseline of a directory that has no accepted state yet. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** An empty flattened tree. */
export const NO_FILES: TreeEntries = new Map();
