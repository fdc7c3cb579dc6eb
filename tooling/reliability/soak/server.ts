/**
 * One real `slivingdoc serve` process (the built bin) driven over stdio by the MCP SDK client,
 * as an agent runs it, that the random-kill soak can SIGKILL at any moment and start again on
 * the same directories.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { builtCliPath } from '../cli';

/** A call's structured answer, or `killed` when the process died before answering. */
export type ToolAnswer =
  | {
      code: string;
      reason?: string;
      generation?: number;
      files?: { path: string; reason?: string; ranges?: { start: number; end: number }[] }[];
    }
  | 'killed';

/** Generous: a loaded 2-core machine queues calls for a long time; the soak must not cut them. */
export const CALL_TIMEOUT_MS = 600_000;

/**
 * One tool call through an MCP client, answered by its structured result (`PROTOCOL_ERROR` when
 * there is none). A dropped connection rejects; the caller decides whether that was a kill.
 */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Exclude<ToolAnswer, 'killed'>> {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: CALL_TIMEOUT_MS,
  });
  const structured = result.structuredContent as Exclude<ToolAnswer, 'killed'> | undefined;
  if (typeof structured?.code !== 'string')
    return { code: 'PROTOCOL_ERROR', reason: 'NO_STRUCTURED_RESULT' };
  return structured;
}
const STDERR_TAIL = 8192;

/** How to start the server: its arguments after `serve` and its environment. */
export interface ServerLaunch {
  args: string[];
  env: Record<string, string>;
}

/** What the soak drives for one writer: a server it can call, kill and start again. */
export interface SoakParticipant {
  readonly running: boolean;
  readonly unexpectedExits: number;
  start(): Promise<void>;
  call(name: 'notes_pull' | 'notes_commit', args: Record<string, string>): Promise<ToolAnswer>;
  /** SIGKILLs the server; `midCall` when a call was in flight. */
  kill(): { killed: boolean; midCall: boolean };
  lastLog(): string;
  close(): Promise<void>;
}

/** A server process that can be killed and restarted; at most one process at a time. */
export class SoakServer implements SoakParticipant {
  #client: Client | undefined;
  #transport: StdioClientTransport | undefined;
  #inFlight = 0;
  #stderrTail = '';
  /** Times the process went away without being killed (a crash: the soak reports it). */
  unexpectedExits = 0;

  constructor(private readonly launch: ServerLaunch) {}

  get running(): boolean {
    return this.#client !== undefined;
  }

  /** Starts the process and connects; throws with the log tail when it does not come up. */
  async start(): Promise<void> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [builtCliPath(), 'serve', ...this.launch.args],
      env: { PATH: process.env.PATH ?? '', ...this.launch.env },
      stderr: 'pipe',
    });
    // pino writes synchronously to fd 2: an undrained pipe would block the server.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    const client = new Client({ name: 'slivingdoc-kill-soak', version: '0.0.0' });
    try {
      await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    } catch (error) {
      await transport.close().catch(() => undefined);
      throw new Error(`slivingdoc serve did not start: ${(error as Error).message}`);
    }
    client.onclose = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      this.#transport = undefined;
      this.unexpectedExits += 1;
    };
    this.#client = client;
    this.#transport = transport;
  }

  /** Calls a tool; `killed` when the process was killed (or died) before it answered. */
  async call(
    name: 'notes_pull' | 'notes_commit',
    args: Record<string, string>,
  ): Promise<ToolAnswer> {
    const client = this.#client;
    if (client === undefined) return 'killed';
    this.#inFlight += 1;
    try {
      return await callTool(client, name, args);
    } catch (error) {
      if (this.#client !== client) return 'killed';
      throw error;
    } finally {
      this.#inFlight -= 1;
    }
  }

  /** SIGKILLs the process; returns whether a call was in flight (a mid-call kill). */
  kill(): { killed: boolean; midCall: boolean } {
    const pid = this.#transport?.pid;
    if (this.#client === undefined || pid === null || pid === undefined)
      return { killed: false, midCall: false };
    const midCall = this.#inFlight > 0;
    this.#client = undefined;
    process.kill(pid, 'SIGKILL');
    void this.#transport?.close().catch(() => undefined);
    this.#transport = undefined;
    return { killed: true, midCall };
  }

  /** The last few KiB the server logged (a report's evidence when a directory gets stuck). */
  lastLog(): string {
    return this.#stderrTail;
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    await client?.close().catch(() => undefined);
  }
}
