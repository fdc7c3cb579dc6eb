import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { bin, sandboxEnv } from './bin';

/**
 * The built bin's `serve`, spoken to as raw newline-delimited JSON-RPC, so a test sees every
 * byte on stdout and stderr (the SDK client would hide anything it cannot parse).
 */
export class RawServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdoutLines: string[] = [];
  readonly stderrLines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #stdoutRest = '';
  #stderrRest = '';
  #waiters: (() => void)[] = [];

  constructor(
    args: string[] = [],
    env: NodeJS.ProcessEnv = sandboxEnv(),
    options: { cwd?: string } = {},
  ) {
    this.child = spawn(process.execPath, [bin, 'serve', ...args], { env, ...options });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.#stdoutRest + chunk).split('\n');
      this.#stdoutRest = parts.pop() ?? '';
      this.stdoutLines.push(...parts);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    // Drained continuously: the server logs synchronously and would block on a full pipe.
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.#stderrRest + chunk).split('\n');
      this.#stderrRest = parts.pop() ?? '';
      this.stderrLines.push(...parts);
    });
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  send(message: object): void {
    this.sendLine(JSON.stringify(message));
  }

  /** Writes one raw line (not necessarily JSON). */
  sendLine(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Waits for the first stdout message (parsed) that `match` accepts. */
  async message(match: (message: unknown) => boolean): Promise<unknown> {
    for (;;) {
      const found = this.stdoutLines.map((line) => JSON.parse(line) as unknown).find(match);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Sends a request and waits for the response with its id. */
  request(id: number, method: string, params: object = {}): Promise<Record<string, unknown>> {
    this.send({ jsonrpc: '2.0', id, method, params });
    return this.response(id);
  }

  /** Waits for the response with `id` (for a request written as a raw line). */
  async response(id: number): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.stdoutLines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((message) => message.id === id);
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async initialize(protocolVersion = '2025-06-18'): Promise<Record<string, unknown>> {
    const response = await this.request(1, 'initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'raw-test', version: '0' },
    });
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return response;
  }

  /** Every stderr line parsed as a log record. */
  records(): Record<string, unknown>[] {
    return this.stderrLines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

/** A `notes_*` tool result as the server sent it. */
export type ToolResult = { structuredContent: Record<string, unknown>; isError?: boolean };

/**
 * Starts and initialises a server; returns it with its notebook directory (read from the
 * instructions) and a `call` for tools. The caller kills it.
 */
export async function startNotebookServer(env: NodeJS.ProcessEnv, args: string[] = []) {
  const server = new RawServer(args, env);
  const init = await server.initialize();
  const instructions = (init.result as { instructions: string }).instructions;
  const notebookDir = /^The notebook directory is (.+?)\. Call/.exec(instructions)?.[1];
  if (notebookDir === undefined) throw new Error('no notebook directory in the instructions');
  let id = 1;
  const call = async (name: string, args: object): Promise<ToolResult> =>
    (await server.request(++id, 'tools/call', { name, arguments: args })).result as ToolResult;
  return { server, notebookDir, call };
}
