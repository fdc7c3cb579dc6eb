/** What one pull or commit returned: the catalogue code (or `OK`) and how long it took. */
export interface Outcome {
  /** `OK`, a catalogue error code, or for git `REMOTE_BUSY` / `GIT_FAILED`. */
  code: string;
  reason?: string;
  ms: number;
}

/** One participant that owns a working copy and synchronises it with the shared state. */
export interface Writer {
  /** The writer's working copy (slivingdoc notebook directory or git clone). */
  readonly dir: string;
  pull(): Promise<Outcome>;
  commit(message: string): Promise<Outcome>;
  /** The writer's server process's resident set size (bytes); absent when not measurable. */
  rssBytes?(): Promise<number | undefined>;
  /** The writer's server process's CPU time so far (user + system, ms); absent when not measurable. */
  cpuMs?(): Promise<number | undefined>;
  close(): Promise<void>;
}

/** A set of writers sharing one notebook, with the compare-and-swap count when it is knowable. */
export interface WriterPool {
  readonly writers: Writer[];
  /** CAS attempts on `current` (git: push attempts) so far; undefined when not countable. */
  casAttempts(): Promise<number | undefined>;
  /**
   * CPU time (user + system, ms) the pool's server processes used so far; undefined when not
   * measurable (in-process writers, git, or no `/proc`).
   */
  cpuMs?(): Promise<number | undefined>;
  /** The server processes' ids, when the pool runs any (memory figures). */
  pids?(): number[];
  close(): Promise<void>;
}

/** Times an async call in milliseconds with the monotonic clock. */
export async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: performance.now() - start };
}
