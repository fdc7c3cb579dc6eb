import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bin } from './bin';
import type { ToolResult } from './mcp-server';

/** Adds a token with the built bin's `token add` and returns it (printed once on stdout). */
export function addToken(env: NodeJS.ProcessEnv, name: string, ...options: string[]): string {
  const run = spawnSync(process.execPath, [bin, 'token', 'add', name, ...options], {
    env,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`token add ${name} failed: ${run.stderr}`);
  return run.stdout.trim();
}

/** One MCP session over Streamable HTTP, driven by the SDK's own client. */
export class HttpSession {
  constructor(
    readonly client: Client,
    readonly transport: StreamableHTTPClientTransport,
  ) {}

  get instructions(): string {
    return this.client.getInstructions() ?? '';
  }

  /** The session's directory, as its instructions name it. */
  get notebookDir(): string {
    return /^The notebook directory is (.+?)\. Call/.exec(this.instructions)![1]!;
  }

  async call(
    name: 'notes_pull' | 'notes_commit',
    args: Record<string, unknown>,
  ): Promise<ToolResult> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, {
      timeout: 300_000,
    });
    const content = result.content as { type: string; text: string }[];
    return {
      isError: result.isError === true,
      structured: result.structuredContent as Record<string, unknown>,
      text: content[0]!.text,
    };
  }

  /** DELETE: ends the session on the server. */
  async terminate(): Promise<void> {
    await this.transport.terminateSession();
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** The built bin's `serve --listen 127.0.0.1:0`, its URL read from its start-up log record. */
export class HubProcess {
  readonly records: Record<string, unknown>[] = [];
  /** What the hub printed on stdout (its start-up banner). */
  stdout = '';
  url = '';
  readonly exited: Promise<number | null>;
  #rest = '';

  private constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(args: string[], env: NodeJS.ProcessEnv): Promise<HubProcess> {
    const child = spawn(process.execPath, [bin, 'serve', '--listen', '127.0.0.1:0', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const hub = new HubProcess(child);
    const decoder = new StringDecoder('utf8');
    let stderr = '';
    const started = new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = decoder.write(chunk);
        stderr += text;
        const parts = (hub.#rest + text).split('\n');
        hub.#rest = parts.pop() ?? '';
        for (const line of parts) {
          try {
            const record = JSON.parse(line) as Record<string, unknown>;
            hub.records.push(record);
            // The start-up record: the hub is listening (its banner follows on stdout).
            if (record.msg === 'serving MCP over Streamable HTTP') {
              hub.url = record.url as string;
              resolve();
            }
          } catch {
            // A refusal line is plain text: kept in `stderr` for the error below.
          }
        }
      });
      child.once('exit', (code) => reject(new Error(`hub exited ${code}: ${stderr}`)));
    });
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      hub.stdout += text;
    });
    await started;
    return hub;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** A new session for `token`, initialized (`clientName` is only the client's name). */
  async connect(token: string, clientName = 'http-e2e'): Promise<HttpSession> {
    const transport = new StreamableHTTPClientTransport(new URL(this.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: clientName, version: '0' });
    await client.connect(transport);
    return new HttpSession(client, transport);
  }

  /** Records whose `msg` is `msg`. */
  logged(msg: string): Record<string, unknown>[] {
    return this.records.filter((record) => record.msg === msg);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/**
 * A raw HTTP request to the hub (for refusals the SDK client would never send). Settles
 * always: with the answer once it was read whole, or with the error when the connection
 * failed before an answer came (a refusal's lingering close lets the answer be read first).
 */
export function rawRequest(
  url: string,
  init: { method?: string; headers?: Record<string, string | number>; body?: Buffer | string },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'POST', headers: init.headers ?? {} });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers as Record<string, unknown>,
          body,
        }),
      );
      res.on('error', reject);
    });
    // After an answer, a failing upload of the rest of a refused body is no failure of the call.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!answered) reject(new Error(`no answer from the hub: ${error.code ?? error.message}`));
    });
    req.end(init.body);
  });
}

/** The JSON-RPC initialize body a client sends first. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '0' },
  },
});

/** Headers of a well-formed MCP POST to the hub at `url` with `token`. */
export function mcpHeaders(url: string, token: string | undefined): Record<string, string> {
  return {
    Host: new URL(url).host,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
  };
}

/** The config directory the sandbox's tokens live in (XDG_CONFIG_HOME under its HOME). */
export function withConfigHome(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, XDG_CONFIG_HOME: join(env.HOME!, 'config') };
}
