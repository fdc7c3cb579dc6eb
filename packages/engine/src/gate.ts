/**
 * The publication gate: processes on one machine that publish to the same store take turns
 * for the span of one attempt (read `current` … CAS answer), so they stop spending attempts
 * on races among themselves. Under a burst of local writers every attempt would otherwise
 * race every other, and the fixed retry budget of contract §9 runs out while the machine's CPU
 * is shared a hundred ways. The gate is an optimisation only: the CAS still decides,
 * writers on other hosts still race through it, and a writer that waited out its budget
 * attempts without the gate. Its holder never waits for another lock (the directory's lock is
 * taken before it), so it cannot deadlock, and the kernel frees it when its holder dies.
 */
import { acquireLock, LockTimeoutError, lockAddress, type Release } from '@slivingdoc/workspace';
import type { ResolvedConfig } from './config';
import type { CallState, DirContext } from './context';

/**
 * The machine-wide name of the gate of the store named `identity`. A test-only `scope`
 * separates writers on one machine as if they ran on different hosts.
 */
export function publicationGateKey(identity: string, scope = ''): string {
  return scope === ''
    ? `publication-gate ${identity}`
    : `publication-gate ${identity} scope ${scope}`;
}

/**
 * Where the holder of the gate of `cfg`'s store serves its group commit (docs/engine.md,
 * "Group commit"): derived like every lock address, so it follows the lock's naming.
 */
export function groupEndpoint(cfg: Pick<ResolvedConfig, 'store' | 'gateScope'>): string {
  return lockAddress(`publication-group ${publicationGateKey(cfg.store.identity, cfg.gateScope)}`);
}

/** One commit call's passage through the gate: its remaining waiting budget. */
export class PublicationGate {
  /** When the call's waiting budget runs out (epoch ms). */
  readonly deadline: number;

  constructor(
    private readonly ctx: DirContext,
    private readonly call: CallState,
  ) {
    this.deadline = Date.now() + ctx.cfg.publicationGateMs;
  }

  /** What is left of the waiting budget (ms); 0 when the gate is off. */
  get remainingMs(): number {
    if (this.ctx.cfg.publicationGateMs === 0) return 0;
    return Math.max(0, this.deadline - Date.now());
  }

  /**
   * Runs one attempt inside the gate, or without it when the gate is off or the call's
   * waiting budget is spent (the attempt then races as contract §9 describes); `attempt` learns
   * which. A waiter does no work meanwhile: fetching what the holders publish while waiting
   * was measured to cost a burst of 100 writers more CPU (each decodes every new manifest)
   * than it saved the holder, and fetching the backlog once before queueing flooded S3.
   */
  async around<T>(attempt: (held: boolean) => Promise<T>): Promise<T> {
    const taken = this.ctx.cfg.publicationGateMs === 0 ? 'busy' : await this.take(this.remainingMs);
    const leave = typeof taken === 'function' ? taken : undefined;
    try {
      return await attempt(leave !== undefined);
    } finally {
      await leave?.();
    }
  }

  /**
   * Takes the gate, waiting at most `waitMs`: its release, `busy` when it is still held after
   * the wait, `unavailable` when it cannot be taken at all (logged). Cancellation rejects.
   */
  async take(waitMs: number): Promise<Release | 'busy' | 'unavailable'> {
    const { cfg } = this.ctx;
    try {
      // Keyed by the store's identity, not P: writers with different private roots meet.
      return await acquireLock(publicationGateKey(cfg.store.identity, cfg.gateScope), {
        timeoutMs: Math.max(0, waitMs),
        ...(this.call.signal === undefined ? {} : { signal: this.call.signal }),
      });
    } catch (err) {
      if (this.call.signal?.aborted) throw err;
      if (err instanceof LockTimeoutError) return 'busy';
      // The gate is an optimisation: when it cannot be taken at all (say a lock directory
      // path too long for a socket), the attempt races as contract §9 describes.
      cfg.logger.warn(
        { code: (err as NodeJS.ErrnoException).code },
        'publication gate unavailable; attempting without it',
      );
      return 'unavailable';
    }
  }
}
