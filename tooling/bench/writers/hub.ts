// One `slivingdoc serve --listen` process (the hub) and one MCP session per writer over
// Streamable HTTP, driven by the MCP SDK's client: the issue-28 way to run many agents on one
// host. Each writer has its own token (its actor) and so its own directory `<ws>/w<i>`, which
// a reconnect of that token finds again.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { addToken } from '@slivingdoc/http';
import type { StoreTarget } from '../stores';
import { type Outcome, timed, type Writer, type WriterPool } from './types';

const CAS_COUNTER = fileURLToPath(new URL('../cas-counter.mjs', import.meta.url));
const CALL_TIMEOUT_MS = 600_000;
const CLOCK_TICKS_PER_SECOND = 100;

export interface HubPoolOptions {
  cli: string;
  target: StoreTarget;
  prefix: string;
  /** A fresh directory: the workspace root, private root, token file and CAS counter. */
  root: string;
  count: number;
  retries: number;
  pullFirst: boolean;
  nodeArgs?: string[];
}

/** A hub and the sessions of its writers. */
export interface HubPool extends WriterPool {
  readonly pid: number;
  /** Opens one more session of a fresh token and returns initialize → first pull answered, ms. */
  newSessionMs(): Promise<number>;
  /**
   * A writer's agent reconnecting: a new session of that writer's token, whose directory is
   * already pulled; initialize → first pull answered, ms (writers taken in turn).
   */
  reconnectMs(): Promise<number>;
}

class SessionWriter implements Writer {
  constructor(
    readonly dir: string,
    private readonly client: Client,
  ) {}

  private async call(name: string, args: Record<string, string>): Promise<Outcome> {
    const { value, ms } = await timed(() =>
      this.client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS }),
    );
    const structured = value.structuredContent as { code?: unknown; reason?: unknown } | undefined;
    if (typeof structured?.code !== 'string')
      return { code: 'PROTOCOL_ERROR', reason: 'NO_STRUCTURED_RESULT', ms };
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

  close(): Promise<void> {
    return this.client.close();
  }
}

/** Starts the hub and waits for its URL (its start-up log record). */
async function startHub(
  opts: HubPoolOptions,
  tokenFile: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      '--import',
      CAS_COUNTER,
      opts.cli,
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--max-sessions',
      '1000',
      '--workspace-root',
      join(opts.root, 'ws'),
      '--private-root',
      join(opts.root, 'private'),
      '--commit-retries',
      String(opts.retries),
      ...opts.target.cliArgs(opts.prefix),
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: opts.root,
        ...opts.target.env,
        SLIVINGDOC_TOKEN_FILE: tokenFile,
        SLIVINGDOC_BENCH_CAS_FILE: join(opts.root, 'cas', 'hub'),
        LOG_LEVEL: 'mcp=warn,info',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let tail = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-65536);
      const match = /"url":"(http:\/\/[^"]+)","maxSessions"/.exec(tail);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the hub exited ${code}: ${tail.slice(-2000)}`)));
  });
  return { child, url };
}

export async function createHubPool(opts: HubPoolOptions): Promise<HubPool> {
  await mkdir(join(opts.root, 'ws'), { recursive: true });
  await mkdir(join(opts.root, 'cas'), { recursive: true });
  const tokenFile = join(opts.root, 'tokens.json');
  const tokens = Array.from({ length: opts.count }, (_, i) => addToken(tokenFile, `w${i}`));
  const { child, url } = await startHub(opts, tokenFile);
  const connect = async (token: string) => {
    const client = new Client({ name: 'slivingdoc-bench', version: '0.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
      { timeout: CALL_TIMEOUT_MS },
    );
    return client;
  };
  const writers: SessionWriter[] = [];
  // Sessions start in parallel: a new session costs the hub a few milliseconds, not a Node boot.
  await Promise.all(
    tokens.map(async (token, index) => {
      const writer = new SessionWriter(join(opts.root, 'ws', `w${index}`), await connect(token));
      writers[index] = writer;
      if (opts.pullFirst) {
        const first = await writer.pull();
        if (first.code !== 'OK') throw new Error(`first pull of session ${index}: ${first.code}`);
      }
    }),
  );
  /** initialize → first notes_pull answered for a new session of `token`, ms; then closed. */
  const firstPullMs = async (token: string) => {
    const { value, ms } = await timed(async () => {
      const client = await connect(token);
      const pulled = await client.callTool({ name: 'notes_pull', arguments: {} });
      if ((pulled.structuredContent as { code?: unknown }).code !== 'OK')
        throw new Error('a new session could not pull');
      return client;
    });
    await value.close();
    return ms;
  };
  let fresh = 0;
  let reconnects = 0;
  return {
    pid: child.pid!,
    writers,
    pids: () => [child.pid!],
    casAttempts: async () => {
      let total = 0;
      for (const name of await readdir(join(opts.root, 'cas')))
        total += (await stat(join(opts.root, 'cas', name))).size;
      return total;
    },
    cpuMs: async () => {
      const text = await readFile(`/proc/${child.pid}/stat`, 'utf8').catch(() => undefined);
      if (text === undefined) return undefined;
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    },
    newSessionMs: () => firstPullMs(addToken(tokenFile, `fresh${fresh++}`)),
    reconnectMs: () => firstPullMs(tokens[reconnects++ % tokens.length]!),
    close: async () => {
      await Promise.all(writers.map((writer) => writer.close().catch(() => undefined)));
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
