// The in-process variant: the same notebooks through `@slivingdoc/engine` directly, with no
// process or MCP protocol in between, so the table separates protocol cost from engine cost.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createNotebookService, type EngineLogger, type NotebookService } from '@slivingdoc/engine';
import { isDomainError } from '@slivingdoc/envelope';
import type { ObjectStore } from '@slivingdoc/store';
import { type CasCounter, countingStore } from '../stores';
import { inBatches } from './pool-util';
import { type Outcome, timed, type Writer, type WriterPool } from './types';

class EngineWriter implements Writer {
  constructor(
    readonly dir: string,
    private readonly service: NotebookService,
  ) {}

  private async call(run: () => Promise<unknown>): Promise<Outcome> {
    const start = performance.now();
    try {
      const { ms } = await timed(run);
      return { code: 'OK', ms };
    } catch (error) {
      const ms = performance.now() - start;
      if (isDomainError(error)) return { code: error.code, reason: error.reason, ms };
      return { code: 'ENGINE_THREW', reason: (error as Error).message.slice(0, 80), ms };
    }
  }

  pull(): Promise<Outcome> {
    return this.call(() => this.service.pull({}));
  }

  commit(message: string): Promise<Outcome> {
    return this.call(() => this.service.commit({ message }));
  }

  close(): Promise<void> {
    return this.service.close();
  }
}

/**
 * The engine's warn and error records on stderr (the cause behind an ENGINE_FAILED or
 * RECOVERY_FAILURE is only in the log record), one line each, when BENCH_ENGINE_LOG is set.
 */
const stderrLogger: EngineLogger = {
  debug: () => {},
  info: () => {},
  warn: (obj, msg) => process.stderr.write(`engine warn: ${msg} ${describe(obj)}\n`),
  error: (obj, msg) => process.stderr.write(`engine error: ${msg} ${describe(obj)}\n`),
};

function describe(obj: object): string {
  const err = (obj as { err?: unknown }).err;
  const cause = err instanceof Error ? `${err.name}: ${err.message}` : JSON.stringify(err ?? '');
  return `${cause} ${JSON.stringify({ ...obj, err: undefined }).slice(0, 300)}`;
}

export interface EnginePoolOptions {
  /** The shared store (the pool counts its CAS attempts on `current`). */
  store: ObjectStore;
  root: string;
  count: number;
  retries: number;
  pullFirst: boolean;
}

/** `count` notebook services in this process, each with its own directory and private root. */
export async function createEnginePool(opts: EnginePoolOptions): Promise<WriterPool> {
  const counter: CasCounter = { attempts: 0 };
  const store = countingStore(opts.store, counter);
  const writers = await inBatches(opts.count, 8, async (index) => {
    const notebookDir = join(opts.root, `w${index}`, 'notebook');
    const privateRoot = join(opts.root, `w${index}`, 'private');
    await mkdir(notebookDir, { recursive: true });
    await mkdir(privateRoot, { recursive: true });
    const service = await createNotebookService({
      store,
      privateRoot,
      workspaceRoot: notebookDir,
      notebookDir,
      commitRetries: opts.retries,
      ...(process.env.BENCH_ENGINE_LOG ? { logger: stderrLogger } : {}),
    });
    const writer = new EngineWriter(service.notebookDir, service);
    if (opts.pullFirst) {
      const first = await writer.pull();
      if (first.code !== 'OK') {
        throw new Error(
          `first pull of in-process writer ${index} failed: ${first.code}·${first.reason}`,
        );
      }
    }
    return writer;
  });
  return {
    writers,
    casAttempts: async () => counter.attempts,
    close: async () => {
      await Promise.all(writers.map((w) => w.close()));
    },
  };
}
