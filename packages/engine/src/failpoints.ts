/**
 * Failpoints: named stage boundaries where tests stop, fail or kill the process, so every
 * crash window of contract §10 is reachable on purpose. With nothing armed, `hit` returns
 * `undefined` synchronously and callers skip the `await`: the production cost is one call.
 */

/** Every stage boundary the engine announces, in the order a commit passes them. */
export const FAILPOINT = {
  afterScan: 'after-scan',
  afterReadCurrent: 'after-read-current',
  afterFetch: 'after-fetch',
  afterMerge: 'after-merge',
  afterPackUpload: 'after-pack-upload',
  afterCasSent: 'after-cas-sent',
  afterCasAnswered: 'after-cas-answered',
  afterRecoveryFlag: 'after-recovery-flag',
  midMaterialize: 'mid-materialize',
  afterMaterialize: 'after-materialize',
  afterBaselineWrite: 'after-baseline-write',
  afterCheckpointPackUpload: 'after-checkpoint-pack-upload',
  afterCheckpointCas: 'after-checkpoint-cas',
  beforeCleanupDelete: 'before-cleanup-delete',
  consolidationAfterPackWritten: 'consolidation-after-pack-written',
  consolidationAfterIndexesRemoved: 'consolidation-after-indexes-removed',
  consolidationAfterFilesRemoved: 'consolidation-after-files-removed',
  approveAfterMark: 'approve-after-mark',
  approveAfterPublish: 'approve-after-publish',
} as const;

/** The name of one failpoint. */
export type FailpointName = (typeof FAILPOINT)[keyof typeof FAILPOINT];

const NAMES = new Set<string>(Object.values(FAILPOINT));

/**
 * `throw` fails the operation there; `kill` sends SIGKILL to this process; `pause` holds the
 * operation there until the process receives SIGUSR2 (a barrier a test drives from outside a
 * real process, e.g. to keep a lock held or a CAS unsent); a function runs there (a barrier).
 */
export type FailpointAction =
  | 'throw'
  | 'kill'
  | 'pause'
  | ((name: FailpointName) => Promise<void> | void);

/** The signal that releases every operation held at a `pause` failpoint. */
export const FAILPOINT_RESUME_SIGNAL = 'SIGUSR2';

const ENV_ACTIONS = new Set<string>(['throw', 'kill', 'pause']);

/** The error an armed `throw` failpoint raises: an unexpected failure, like a bug would be. */
export class FailpointError extends Error {
  constructor(readonly failpoint: FailpointName) {
    super(`failpoint ${failpoint} fired`);
    this.name = 'FailpointError';
  }
}

/** What the engine calls at each stage boundary. */
export interface Failpoints {
  /** Returns `undefined` when nothing is armed at `name`, else a promise to await. */
  hit(name: FailpointName): Promise<void> | undefined;
}

/** The default: nothing armed anywhere. */
export const NO_FAILPOINTS: Failpoints = { hit: () => undefined };

/** A settable set of failpoints for tests; each action fires `times` times (default: always). */
export class FailpointRegistry implements Failpoints {
  readonly #armed = new Map<FailpointName, { action: FailpointAction; remaining: number }>();

  /** Arms `name`; `times` bounds how often it fires (default unbounded). */
  set(name: FailpointName, action: FailpointAction, times = Number.POSITIVE_INFINITY): this {
    this.#armed.set(name, { action, remaining: times });
    return this;
  }

  /** Disarms `name` (or everything). */
  clear(name?: FailpointName): void {
    if (name === undefined) this.#armed.clear();
    else this.#armed.delete(name);
  }

  hit(name: FailpointName): Promise<void> | undefined {
    const armed = this.#armed.get(name);
    if (armed === undefined || armed.remaining <= 0) return undefined;
    armed.remaining -= 1;
    return fire(name, armed.action);
  }
}

async function fire(name: FailpointName, action: FailpointAction): Promise<void> {
  if (action === 'throw') throw new FailpointError(name);
  if (action === 'kill') {
    process.kill(process.pid, 'SIGKILL');
    // SIGKILL is delivered asynchronously; never let the operation continue meanwhile.
    await new Promise<never>(() => {});
  }
  if (action === 'pause') {
    // A signal listener keeps no process alive; a held operation must, as its I/O would.
    const keepAlive = setInterval(() => undefined, 1 << 30);
    await new Promise<void>((resolve) => process.once(FAILPOINT_RESUME_SIGNAL, () => resolve()));
    clearInterval(keepAlive);
  }
  if (typeof action === 'function') await action(name);
}

/** The environment variable a real child process reads: `name=action[,name=action…]` (action `throw`, `kill` or `pause`). */
export const FAILPOINTS_ENV = 'SLIVINGDOC_FAILPOINTS';

/**
 * Parses `SLIVINGDOC_FAILPOINTS` (`after-cas-sent=kill,mid-materialize=throw`). Unset or empty
 * means no failpoints; an unknown name or action throws, so a typo cannot silently test nothing.
 */
export function failpointsFromEnv(value: string | undefined): Failpoints {
  if (value === undefined || value === '') return NO_FAILPOINTS;
  const registry = new FailpointRegistry();
  for (const item of value.split(',')) {
    const [name, action] = item.split('=');
    if (
      name === undefined ||
      !NAMES.has(name) ||
      action === undefined ||
      !ENV_ACTIONS.has(action)
    ) {
      throw new Error(`${FAILPOINTS_ENV}: invalid entry ${JSON.stringify(item)}`);
    }
    registry.set(name as FailpointName, action as 'throw' | 'kill' | 'pause');
  }
  return registry;
}

/** Awaits a failpoint only when one is armed. */
export async function failpoint(points: Failpoints, name: FailpointName): Promise<void> {
  const pending = points.hit(name);
  if (pending !== undefined) await pending;
}
