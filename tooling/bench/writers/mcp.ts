// The product as users run it: one `slivingdoc serve` process per writer, driven over stdio by
// the MCP SDK client, each with its own notebook directory and private root, all sharing one
// store (the embedded store's directory or an S3 bucket) under one prefix.
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StoreTarget } from '../stores';
import { inBatches } from './pool-util';
import { type Outcome, timed, type Writer, type WriterPool } from './types';

const CAS_COUNTER = fileURLToPath(new URL('../cas-counter.mjs', import.meta.url));
/** Generous: a burst of 100 on 2 cores queues for a long time; the bench must not cut it short. */
const CALL_TIMEOUT_MS = 600_000;
const STDERR_TAIL = 4096;
/** Linux's USER_HZ, the unit of /proc/<pid>/stat times (100 on every architecture Node runs on). */
const CLOCK_TICKS_PER_SECOND = 100;

export interface McpPoolOptions {
  /** The built bin, `apps/slivingdoc/dist/cli.js`. */
  cli: string;
  target: StoreTarget;
  prefix: string;
  /** A fresh directory for the writers' notebooks, private roots and CAS counter files. */
  root: string;
  count: number;
  retries: number;
  /** Pull once after connecting (commit needs a baseline); off to time a cold pull. */
  pullFirst: boolean;
  /** Extra server flags, e.g. `--checkpoint-packs`. */
  extraArgs?: string[];
  /** Extra Node flags for the server processes, e.g. `--cpu-prof` when profiling. */
  nodeArgs?: string[];
  /** Extra environment for the server processes, e.g. a test-only switch. */
  env?: Record<string, string>;
  /**
   * Simulated hosts: writer `i` runs in gate scope `host-(i mod hosts)` (the test-only
   * SLIVINGDOC_TEST_GATE_SCOPE), so each host's writers group among themselves and the hosts
   * race by CAS as on separate machines. Absent: one host.
   */
  hosts?: number;
}

interface StructuredOutcome {
  code?: unknown;
  reason?: unknown;
}

class McpWriter implements Writer {
  private stderrTail = '';

  constructor(
    readonly dir: string,
    private readonly client: Client,
    private readonly transport: StdioClientTransport,
  ) {
    // pino writes synchronously to fd 2: an undrained pipe would block the server.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
  }

  private async call(name: string, args: Record<string, string>): Promise<Outcome> {
    const { value, ms } = await timed(() =>
      this.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }),
    );
    const structured = value.structuredContent as StructuredOutcome | undefined;
    if (typeof structured?.code !== 'string') {
      return { code: 'PROTOCOL_ERROR', reason: 'NO_STRUCTURED_RESULT', ms };
    }
    const outcome: Outcome = { code: structured.code, ms };
    if (typeof structured.reason === 'string') outcome.reason = structured.reason;
    return outcome;
  }

  pull(): Promise<Outcome> {
    return this.call('notes_pull', {});
  }

  commit(message: string): Promise<Outcome> {
    return this.call('notes_commit', { message });
  }

  /** The server's CPU time so far (user + system, ms) from `/proc`; undefined elsewhere. */
  async cpuMs(): Promise<number | undefined> {
    const pid = this.transport.pid;
    if (pid === null) return undefined;
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) return undefined;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  }

  /** The server process's id (memory figures read /proc with it). */
  get pid(): number | undefined {
    return this.transport.pid ?? undefined;
  }

  /** The server's resident set size (bytes) from `/proc`; undefined elsewhere. */
  async rssBytes(): Promise<number | undefined> {
    const pid = this.pid;
    if (pid === undefined) return undefined;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
    const kib = status?.match(/^VmRSS:\s+(\d+) kB$/m)?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  }

  /** The last few KiB the server logged, for a report when a writer misbehaves. */
  lastLog(): string {
    return this.stderrTail;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

async function startWriter(opts: McpPoolOptions, index: number): Promise<McpWriter> {
  const home = join(opts.root, `w${index}`);
  const notebook = join(home, 'notebook');
  const privateRoot = join(home, 'private');
  await mkdir(notebook, { recursive: true });
  await mkdir(privateRoot, { recursive: true });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      ...(opts.nodeArgs ?? []),
      '--import',
      CAS_COUNTER,
      opts.cli,
      'serve',
      '--workspace-root',
      notebook,
      '--private-root',
      privateRoot,
      '--commit-retries',
      String(opts.retries),
      ...opts.target.cliArgs(opts.prefix),
      ...(opts.extraArgs ?? []),
    ],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      ...opts.target.env,
      ...opts.env,
      SLIVINGDOC_BENCH_CAS_FILE: join(opts.root, 'cas', `w${index}`),
      ...(opts.hosts === undefined
        ? {}
        : { SLIVINGDOC_TEST_GATE_SCOPE: `host-${index % opts.hosts}` }),
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'slivingdoc-bench', version: '0.0.0' });
  const writer = new McpWriter(notebook, client, transport);
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  } catch (error) {
    throw new Error(
      `slivingdoc serve did not start: ${(error as Error).message}\n${writer.lastLog()}`,
    );
  }
  return writer;
}

/** Total CAS attempts the servers' preloaded counter recorded (one byte per attempt). */
async function countedAttempts(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
}

/**
 * Starts `count` server processes (a few at a time: each start costs a Node boot) and, with
 * `pullFirst`, pulls once in each so they can commit.
 */
export async function createMcpPool(opts: McpPoolOptions): Promise<WriterPool> {
  const casDir = join(opts.root, 'cas');
  await mkdir(casDir, { recursive: true });
  // Four at a time: more only queues Node boots behind each other on 2 cores.
  const writers = await inBatches(opts.count, 4, async (index) => {
    const writer = await startWriter(opts, index);
    if (opts.pullFirst) {
      const first = await writer.pull();
      if (first.code !== 'OK') {
        throw new Error(
          `first pull of writer ${index} failed: ${first.code}·${first.reason}\n${writer.lastLog()}`,
        );
      }
    }
    return writer;
  });
  return {
    writers,
    pids: () => writers.flatMap((writer) => (writer.pid === undefined ? [] : [writer.pid])),
    casAttempts: () => countedAttempts(casDir),
    cpuMs: async () => {
      const each = await Promise.all(writers.map((w) => w.cpuMs()));
      return each.some((ms) => ms === undefined)
        ? undefined
        : each.reduce((sum: number, ms) => sum + (ms as number), 0);
    },
    close: async () => {
      await Promise.all(writers.map((w) => w.close()));
    },
  };
}
