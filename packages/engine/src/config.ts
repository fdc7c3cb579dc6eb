/** The engine's configuration: what callers pass, and the resolved form every module reads. */
import type { MergeAdditions } from '@slivingdoc/merge';
import type { ObjectStore } from '@slivingdoc/store';
import { type Failpoints, NO_FAILPOINTS } from './failpoints';
import { type BackoffClock, SYSTEM_CLOCK } from './notebook/backoff';

/** A pino-compatible logger (the app passes its `engine` child logger). */
export interface EngineLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Configuration of one notebook service (docs/interfaces.md). */
export interface EngineConfig {
  /** Where the accepted notebook lives. The caller owns it (and closes it). */
  store: ObjectStore;
  /** Root of the private state P of every directory this service manages. */
  privateRoot: string;
  /** Every request path must resolve at or below this root. */
  workspaceRoot: string;
  /** The directory an omitted or empty `path` means. */
  notebookDir: string;
  /** Writable path set (contract §5). */
  writable?: string[];
  /** Read-only path set (contract §5). */
  readOnly?: string[];
  /**
   * The store's credentials can read but not write (the app's compatibility probe found so,
   * contract §7): every commit and revert is refused with READ_ONLY_SESSION · STORE_READ_ONLY
   * before anything is read or changed. Pulls and reads work as usual. Default false.
   */
  readOnlyStore?: boolean;
  /** CAS retries after the first attempt, 0–100 (default 8). */
  commitRetries?: number;
  /** Active increments that trigger a background checkpoint, ≥ 1 (default 256). */
  checkpointPacks?: number;
  /** Retained checkpoint chains, 0–64 (default 1). */
  retainedCheckpoints?: number;
  /** Log sink; silent when absent. */
  logger?: EngineLogger;
  /**
   * Failpoints (tests only); default none. The engine never reads the environment itself: a
   * program that wants `SLIVINGDOC_FAILPOINTS` passes `failpointsFromEnv(process.env.SLIVINGDOC_FAILPOINTS)`.
   */
  failpoints?: Failpoints;
  /** Home directory for `~/` expansion (default `os.homedir()`). */
  home?: string;
  /** How long a call waits for the directory's lock before PATH_BUSY (default 10 s). */
  lockTimeoutMs?: number;
  /** How long `close()` waits for background checkpoints (default 30 s). */
  closeTimeoutMs?: number;
  /**
   * How long one commit may wait in total, across its attempts, for the publication gate
   * (processes on this machine publishing to the same store take turns per attempt); after
   * that it attempts without the gate. 0 (the default) = no gate. The app sets 30 s for its
   * embedded and S3 stores (docs/engine.md, "Publication gate").
   */
  publicationGateMs?: number;
  /**
   * Group commit (docs/engine.md, "Group commit"): while this process holds the publication
   * gate, the commits other local writers queue on it join its turn and are published with
   * one compare-and-swap; while another holds it, this process's commits join that turn.
   * Needs the gate (`publicationGateMs` > 0); without it nothing changes. Default off; the app
   * turns it on.
   */
  groupCommit?: boolean;
  /**
   * How long a group's holder waits, before its CAS, for its members to acknowledge that they
   * recorded their input (docs/engine.md, "A member's publication input"): until `idleMs` pass
   * without a new acknowledgement, and at most `totalMs` in all (defaults 2 s and 10 s). A
   * member that has not acknowledged by then is left out of that CAS and attempts alone.
   * Tests that count a group's CASes raise both, so that a loaded machine cannot turn a slow
   * member into a solo attempt.
   */
  groupRecordWait?: { idleMs: number; totalMs: number };
  /**
   * TEST ONLY: writers with different scopes on one machine use different publication gates
   * (and groups), as writers on different hosts would. Never a user setting: leaving it empty
   * is the only correct production value.
   */
  gateScope?: string;
  /**
   * TEST ONLY: consolidate P fully (every unreachable object dropped) after every call instead
   * of when its packs or loose objects cross the thresholds (docs/engine.md, "Bounded private
   * state"), so tests and the random-kill soak prune often. Default off.
   */
  consolidateAlways?: boolean;
  /**
   * One object database for every directory this service serves (docs/engine.md, "One object
   * database per store"), at `<privateRoot>/stores/<sha256(store identity)>/`, claimed for the
   * service's life: one fetch and one import of each increment for all of them. The claim is
   * taken when the service opens and waits up to `lockTimeoutMs` for another holder (a hub
   * restarted beside its exiting predecessor); when another process still holds it, each
   * directory keeps its own database in its P (logged once).
   * Default off (each directory its own); the app turns it on for `serve --listen`.
   */
  sharedObjects?: boolean;
  /** Backoff randomness and sleep (tests make them deterministic). */
  clock?: BackoffClock;
  /**
   * Where both sides only inserted lines at the same place of the baseline (and add/add of a
   * path): `keep` (the default) keeps both, R's lines first, without a conflict; `conflict` is
   * git's rule, markers for every overlapping insertion (contract §6, `--merge-additions`).
   */
  mergeAdditions?: MergeAdditions;
}

/** The configuration with every default applied and every range checked. */
export interface ResolvedConfig {
  store: ObjectStore;
  privateRoot: string;
  workspaceRoot: string;
  notebookDir: string;
  writable: string[];
  readOnly: string[];
  readOnlyStore: boolean;
  commitRetries: number;
  checkpointPacks: number;
  retainedCheckpoints: number;
  logger: EngineLogger;
  failpoints: Failpoints;
  home: string;
  lockTimeoutMs: number;
  closeTimeoutMs: number;
  publicationGateMs: number;
  groupCommit: boolean;
  groupRecordWait: { idleMs: number; totalMs: number };
  gateScope: string;
  consolidateAlways: boolean;
  sharedObjects: boolean;
  clock: BackoffClock;
  mergeAdditions: MergeAdditions;
}

const SILENT: EngineLogger = { debug() {}, info() {}, warn() {}, error() {} };

function integerIn(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < min || chosen > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
  }
  return chosen;
}

/** Applies defaults and checks ranges; throws `RangeError` on a value out of range. */
export function resolveConfig(config: EngineConfig, home: string): ResolvedConfig {
  return {
    store: config.store,
    privateRoot: config.privateRoot,
    workspaceRoot: config.workspaceRoot,
    notebookDir: config.notebookDir,
    writable: config.writable ?? [],
    readOnly: config.readOnly ?? [],
    readOnlyStore: config.readOnlyStore ?? false,
    commitRetries: integerIn('commitRetries', config.commitRetries, 8, 0, 100),
    checkpointPacks: integerIn(
      'checkpointPacks',
      config.checkpointPacks,
      256,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    retainedCheckpoints: integerIn('retainedCheckpoints', config.retainedCheckpoints, 1, 0, 64),
    logger: config.logger ?? SILENT,
    failpoints: config.failpoints ?? NO_FAILPOINTS,
    home: config.home ?? home,
    lockTimeoutMs: integerIn('lockTimeoutMs', config.lockTimeoutMs, 10_000, 0, 3_600_000),
    closeTimeoutMs: integerIn('closeTimeoutMs', config.closeTimeoutMs, 30_000, 0, 3_600_000),
    publicationGateMs: integerIn('publicationGateMs', config.publicationGateMs, 0, 0, 3_600_000),
    groupCommit: config.groupCommit ?? false,
    groupRecordWait: {
      idleMs: integerIn(
        'groupRecordWait.idleMs',
        config.groupRecordWait?.idleMs,
        2_000,
        1,
        3_600_000,
      ),
      totalMs: integerIn(
        'groupRecordWait.totalMs',
        config.groupRecordWait?.totalMs,
        10_000,
        1,
        3_600_000,
      ),
    },
    gateScope: config.gateScope ?? '',
    consolidateAlways: config.consolidateAlways ?? false,
    sharedObjects: config.sharedObjects ?? false,
    clock: config.clock ?? SYSTEM_CLOCK,
    mergeAdditions: mergeAdditionsOf(config.mergeAdditions),
  };
}

/** `keep` unless set; throws `RangeError` on anything but `keep` or `conflict`. */
function mergeAdditionsOf(value: MergeAdditions | undefined): MergeAdditions {
  if (value === undefined || value === 'keep' || value === 'conflict') return value ?? 'keep';
  throw new RangeError('mergeAdditions must be keep or conflict');
}
