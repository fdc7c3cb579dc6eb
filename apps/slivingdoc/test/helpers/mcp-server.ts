import { StringDecoder } from 'node:string_decoder';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CATALOGUE } from '@slivingdoc/envelope';
import { expect } from 'vitest';
import { bin } from './bin';

/** One `files` entry of an error envelope. */
export interface FileEntry {
  path: string;
  reason: string;
  ranges: { start: number; end: number }[];
}

/** What a tool call returned: the structured object and the single text item. */
export interface ToolResult {
  isError: boolean;
  structured: Record<string, unknown>;
  text: string;
}

/** A `tools/call` result from any MCP SDK client, reduced to what the tests compare. */
export function toToolResult(answer: object): ToolResult {
  const result = answer as { content?: unknown; isError?: unknown; structuredContent?: unknown };
  const content = result.content as { text: string }[];
  return {
    isError: result.isError === true,
    structured: result.structuredContent as Record<string, unknown>,
    text: content[0]!.text,
  };
}

/**
 * The built bin's `serve`, driven by the MCP SDK's own client over real stdio. Stderr is
 * drained continuously (the server logs synchronously and would block on a full pipe).
 */
export class McpServerProcess {
  readonly stderrLines: string[] = [];
  notebookDir = '';
  #stderrRest = '';

  private constructor(
    readonly client: Client,
    readonly transport: StdioClientTransport,
  ) {}

  /** `clientName` is the client's `clientInfo.name` (the default actor of its commits). */
  static async start(
    args: string[],
    env: NodeJS.ProcessEnv,
    clientName = 'envelope-e2e',
  ): Promise<McpServerProcess> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'serve', ...args],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    const server = new McpServerProcess(new Client({ name: clientName, version: '0' }), transport);
    const decoder = new StringDecoder('utf8');
    transport.stderr?.on('data', (chunk: Buffer) => {
      const parts = (server.#stderrRest + decoder.write(chunk)).split('\n');
      server.#stderrRest = parts.pop() ?? '';
      server.stderrLines.push(...parts);
    });
    await server.client.connect(transport);
    server.notebookDir = /^The notebook directory is (.+?)\. Call/.exec(
      server.client.getInstructions() ?? '',
    )![1]!;
    return server;
  }

  get pid(): number {
    return this.transport.pid!;
  }

  async call(
    name: 'notes_pull' | 'notes_commit',
    args: Record<string, unknown>,
  ): Promise<ToolResult> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, {
      timeout: 120_000,
    });
    const content = result.content as { type: string; text: string }[];
    expect(content).toHaveLength(1);
    expect(content[0]!.type).toBe('text');
    return toToolResult(result);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** The configured path sets a server was started with (normalised and sorted). */
export interface Sets {
  writable: string[];
  readOnly: string[];
}

export const NO_SETS: Sets = { writable: [], readOnly: [] };

/**
 * The candid text item, rebuilt independently from contract §2's layout (not from the envelope
 * package's own builder), so a drift in either shows up here.
 */
function expectedCandidText(env: Record<string, unknown>, sets: Sets): string {
  const lines = [`${env.code} · ${env.reason}`, String(env.message)];
  if (env.detail !== undefined) lines.push(`detail: ${env.detail}`);
  for (const file of env.files as FileEntry[]) {
    const ranges = file.ranges.map((r) => `${r.start}-${r.end}`).join(', ');
    lines.push(`file: ${file.path} · ${file.reason}${ranges === '' ? '' : ` · lines ${ranges}`}`);
  }
  lines.push(
    `action: ${env.action}`,
    `retryable: ${env.retryable}`,
    `diagnosticId: ${env.diagnosticId}`,
  );
  if (env.recovery !== undefined) {
    const r = env.recovery as { stage: string; remoteAccepted: string; resynchronized: boolean };
    lines.push(
      `recovery: stage ${r.stage} · remoteAccepted ${r.remoteAccepted} · resynchronized ${r.resynchronized}`,
    );
  }
  if (sets.writable.length > 0) lines.push(`writable: ${sets.writable.join(', ')}`);
  if (sets.readOnly.length > 0) lines.push(`read-only: ${sets.readOnly.join(', ')}`);
  return lines.join('\n');
}

/** What a test expects of one error envelope; action and retryable come from the catalogue. */
export interface ExpectedEnvelope {
  code: string;
  reason: string;
  files?: FileEntry[];
  sets?: Sets;
  detail?: string;
  recovery?: { stage: string; remoteAccepted: string; resynchronized: boolean };
}

/**
 * Checks one domain error completely: `isError`, code, reason, the catalogue's action and
 * retryable verdict for that reason, a fresh diagnosticId, files, both path-set arrays,
 * `detail`/`recovery` present exactly when expected, and the candid text line by line.
 * Returns the structured object for further checks.
 */
export function expectEnvelope(
  result: ToolResult,
  expected: ExpectedEnvelope,
): Record<string, unknown> {
  const sets = expected.sets ?? NO_SETS;
  const spec = (
    CATALOGUE as Record<string, { reasons: Record<string, { action: string; retryable: boolean }> }>
  )[expected.code]?.reasons[expected.reason];
  expect(spec, `${expected.code} · ${expected.reason} is catalogued`).toBeDefined();
  const env = result.structured;
  expect(result.isError).toBe(true);
  expect(env).toMatchObject({
    code: expected.code,
    reason: expected.reason,
    action: spec!.action,
    retryable: spec!.retryable,
    files: expected.files ?? [],
    readOnly: sets.readOnly,
    writable: sets.writable,
  });
  expect(env.diagnosticId).toMatch(/^[0-9a-f]{16}$/);
  expect(typeof env.message).toBe('string');
  expect((env.message as string).length).toBeGreaterThan(0);
  expect(env.detail).toEqual(expected.detail);
  expect(env.recovery).toEqual(expected.recovery);
  const allowed = ['code', 'reason', 'action', 'diagnosticId', 'retryable', 'message', 'files'];
  allowed.push('readOnly', 'writable');
  if (expected.detail !== undefined) allowed.push('detail');
  if (expected.recovery !== undefined) allowed.push('recovery');
  expect(Object.keys(env).sort()).toEqual(allowed.sort());
  expect(result.text).toBe(expectedCandidText(env, sets));
  return env;
}
