import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { CallLogger } from './call-log';
import {
  batchCallsWithDuplicateKeys,
  DuplicateKeyLedger,
  toolCallHasDuplicateKeys,
} from './duplicate-keys';
import {
  errorResponse,
  INVALID_REQUEST,
  idOf,
  isJsonRpcMessage,
  isRequest,
  PARSE_ERROR,
  responseId,
} from './jsonrpc';
import { BATCH_PROTOCOL_VERSIONS, negotiateProtocolVersion } from './protocol-versions';

/** Lines longer than this are refused (the SDK's stdio transport uses the same bound). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Where refused input is reported: one `warn` record per refused message. */
export type ProtocolLogger = Pick<CallLogger, 'warn'>;

/**
 * The initialize result without `protocolVersion` (the transport negotiates it as the SDK
 * does): what {@link StrictStdioServerTransport.listen} answers the first `initialize` with.
 */
export interface EarlyInitializeResult {
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string };
  instructions?: string;
}

/** The id under which an early-answered `initialize` is replayed to the server. */
const REPLAY_ID = 'slivingdoc:early-initialize';

/** A batch being processed: the ids still unanswered and the responses collected so far. */
interface PendingBatch {
  unanswered: Set<string>;
  responses: unknown[];
}

/**
 * MCP over stdio, newline-delimited JSON-RPC like the SDK's `StdioServerTransport`, with
 * the protocol's edge cases answered rather than dropped:
 *
 * - a line that is not JSON → -32700 Parse error (`id: null`); a JSON value that is not a
 *   valid message → -32600 Invalid Request (its id when readable); each logged once at warn;
 * - a batch (a JSON array) is processed when the negotiated protocol version has batches
 *   (2025-03-26; the responses go back as one array) and refused with -32600 otherwise;
 * - error messages lose the `MCP error <code>: ` prefix the SDK's `McpError` bakes into them
 *   (clients add their own, so it would show twice);
 * - a `tools/call` whose `arguments` repeat a key is recorded in {@link duplicateKeys}
 *   before the message is handed on, since JSON.parse keeps one of the two values (contract §2).
 *
 * {@link listen} starts reading before the server is connected and answers the first
 * `initialize` itself, so a host's handshake does not wait for the engine to
 * load; the request is replayed to the server when it connects, and that duplicate
 * answer is dropped. Written as a whole transport because the SDK's class parses lines in a
 * private method.
 */
export class StrictStdioServerTransport implements Transport {
  /** Pass to `createMcpServer({ duplicateKeys })`. */
  readonly duplicateKeys = new DuplicateKeyLedger();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #buffer: Buffer = Buffer.alloc(0);
  /** Skipping the rest of an over-long line until its newline. */
  #discarding = false;
  #listening = false;
  #started = false;
  /** stdin ended before {@link start}: deliver what was read, then close. */
  #endedEarly = false;
  /** Messages read before {@link start}, delivered in order when the server connects. */
  #queue: JSONRPCMessage[] = [];
  #early?: () => Promise<EarlyInitializeResult>;
  #earlyAnswered = false;
  /** The protocol version of the last initialize received; none before the first. */
  #negotiated: string | undefined;
  readonly #initializeIds = new Set<string>();
  readonly #batchOf = new Map<string, PendingBatch>();
  #logger: ProtocolLogger | undefined;
  #pendingWarnings: [Record<string, unknown>, string][] = [];
  readonly #stdin: Readable;
  readonly #stdout: Writable;

  constructor(stdin: Readable = process.stdin, stdout: Writable = process.stdout) {
    this.#stdin = stdin;
    this.#stdout = stdout;
  }

  /** Where refused input is logged; records refused before this was set are written now. */
  setLogger(logger: ProtocolLogger): void {
    this.#logger = logger;
    for (const [record, msg] of this.#pendingWarnings.splice(0)) logger.warn(record, msg);
  }

  /** The protocol version negotiated by the last `initialize`, once one was answered. */
  get protocolVersion(): string | undefined {
    return this.#negotiated;
  }

  /**
   * Starts reading stdin before the server connects. Messages are held until
   * {@link start}; the first `initialize` is answered at once with `initialize()`'s result
   * (which may wait for start-up checks; when it rejects, nothing is answered).
   */
  listen(initialize?: () => Promise<EarlyInitializeResult>): void {
    if (this.#listening) throw new Error('StrictStdioServerTransport is already listening');
    this.#listening = true;
    this.#early = initialize;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
    this.#stdin.on('end', this.#onEnd);
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (let end = this.#buffer.indexOf(0x0a); end !== -1; end = this.#buffer.indexOf(0x0a)) {
      const line = this.#buffer.toString('utf8', 0, end).replace(/\r$/, '');
      this.#buffer = this.#buffer.subarray(end + 1);
      if (this.#discarding) this.#discarding = false;
      else this.#receive(line);
    }
    if (this.#buffer.length > MAX_LINE_BYTES) {
      this.#buffer = Buffer.alloc(0);
      if (!this.#discarding)
        this.#refuse(null, PARSE_ERROR, `Parse error: a line exceeds ${MAX_LINE_BYTES} bytes`);
      this.#discarding = true;
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    if (this.#started) void this.close();
    else this.#endedEarly = true;
  };

  #receive(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#refuse(null, PARSE_ERROR, 'Parse error', { bytes: Buffer.byteLength(line) });
      return;
    }
    if (Array.isArray(value)) {
      this.#receiveBatch(value, line);
      return;
    }
    if (!isJsonRpcMessage(value)) {
      this.#refuse(idOf(value), INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message');
      return;
    }
    if (isRequest(value) && value.method === 'tools/call' && toolCallHasDuplicateKeys(line))
      this.duplicateKeys.mark(value.id);
    this.#accept(value);
  }

  #receiveBatch(items: unknown[], line: string): void {
    if (items.length === 0) {
      this.#refuse(null, INVALID_REQUEST, 'Invalid Request: an empty batch');
      return;
    }
    const version = this.#negotiated;
    if (version === undefined || !BATCH_PROTOCOL_VERSIONS.includes(version)) {
      const why =
        version === undefined
          ? 'a batch before initialize'
          : `batches are not part of MCP protocol version ${version}`;
      this.#refuse(null, INVALID_REQUEST, `Invalid Request: ${why}`);
      return;
    }
    const batch: PendingBatch = { unanswered: new Set(), responses: [] };
    const accepted: JSONRPCMessage[] = [];
    const duplicates = batchCallsWithDuplicateKeys(line);
    for (const [index, item] of items.entries()) {
      const problem = this.#batchItemProblem(item, batch);
      if (problem !== undefined) {
        this.#warn(INVALID_REQUEST, problem);
        batch.responses.push(
          errorResponse(idOf(item), INVALID_REQUEST, `Invalid Request: ${problem}`),
        );
        continue;
      }
      const message = item as JSONRPCMessage;
      if (isRequest(message)) {
        const key = keyOf(message.id);
        batch.unanswered.add(key);
        this.#batchOf.set(key, batch);
        if (message.method === 'tools/call' && duplicates.has(index))
          this.duplicateKeys.mark(message.id);
      }
      accepted.push(message);
    }
    this.#flushBatch(batch);
    for (const message of accepted) this.#accept(message);
  }

  /** Why one element of a batch is refused, if it is. */
  #batchItemProblem(item: unknown, batch: PendingBatch): string | undefined {
    if (!isJsonRpcMessage(item)) return 'not a JSON-RPC 2.0 message';
    if (!isRequest(item)) return undefined;
    if (item.method === 'initialize') return 'initialize must not be part of a batch';
    const key = keyOf(item.id);
    if (batch.unanswered.has(key) || this.#batchOf.has(key))
      return 'the id of a request still in progress';
    return undefined;
  }

  /** A valid message: tracked, then delivered (or held until the server connects). */
  #accept(message: JSONRPCMessage): void {
    if (isRequest(message) && message.method === 'initialize') {
      this.#initializeIds.add(keyOf(message.id));
      // Known on receipt (the SDK's rule): a client may send its next messages at once.
      const requested = (message.params as { protocolVersion?: unknown } | undefined)
        ?.protocolVersion;
      if (typeof requested === 'string') this.#negotiated = negotiateProtocolVersion(requested);
    }
    if ('method' in message && message.method === 'notifications/cancelled')
      this.#forgetCancelled(message.params?.requestId);
    if (this.#started) {
      this.onmessage?.(message);
      return;
    }
    if (isRequest(message) && message.method === 'initialize' && this.#answerEarly(message)) {
      this.#queue.push({ ...message, id: REPLAY_ID });
      return;
    }
    this.#queue.push(message);
  }

  /** Answers the first well-formed `initialize` before the server exists. */
  #answerEarly(request: Extract<JSONRPCMessage, { id: RequestId; method: string }>): boolean {
    const params = request.params as Record<string, unknown> | undefined;
    const clientInfo = params?.clientInfo as Record<string, unknown> | undefined;
    const wellFormed =
      typeof params?.protocolVersion === 'string' &&
      typeof params.capabilities === 'object' &&
      params.capabilities !== null &&
      typeof clientInfo?.name === 'string' &&
      typeof clientInfo.version === 'string';
    if (this.#early === undefined || this.#earlyAnswered || !wellFormed) return false;
    this.#earlyAnswered = true;
    const protocolVersion = negotiateProtocolVersion(params.protocolVersion as string);
    this.#early().then(
      (result) => {
        void this.send({
          jsonrpc: '2.0',
          id: request.id,
          result: { protocolVersion, ...result },
        });
      },
      // The start-up refusal that rejected it is the process's answer; send nothing.
      () => undefined,
    );
    return true;
  }

  /** A cancelled request in a batch gets no response (MCP): stop waiting for it. */
  #forgetCancelled(requestId: unknown): void {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const key = keyOf(requestId);
    const batch = this.#batchOf.get(key);
    if (batch === undefined) return;
    this.#batchOf.delete(key);
    batch.unanswered.delete(key);
    this.#flushBatch(batch);
  }

  #flushBatch(batch: PendingBatch): void {
    if (batch.unanswered.size > 0 || batch.responses.length === 0) return;
    this.#write(batch.responses.splice(0));
  }

  /** Answers refused input with a JSON-RPC error and logs it once at warn. */
  #refuse(
    id: RequestId | null,
    code: number,
    message: string,
    extra: Record<string, unknown> = {},
  ): void {
    this.#warn(code, message, extra);
    this.#write(errorResponse(id, code, message));
  }

  #warn(code: number, message: string, extra: Record<string, unknown> = {}): void {
    const record = { jsonrpcCode: code, refused: message, ...extra };
    const msg = 'JSON-RPC input refused';
    if (this.#logger) this.#logger.warn(record, msg);
    else this.#pendingWarnings.push([record, msg]);
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StrictStdioServerTransport already started');
    this.#started = true;
    if (!this.#listening) this.listen();
    for (const message of this.#queue.splice(0)) this.onmessage?.(message);
    if (this.#endedEarly) void this.close();
  }

  async close(): Promise<void> {
    if (!this.#listening) return;
    this.#listening = false;
    this.#started = false;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdin.off('end', this.#onEnd);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#buffer = Buffer.alloc(0);
    this.#queue = [];
    this.#batchOf.clear();
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const id = responseId(message);
    if (id === undefined) return this.#write(withoutSdkPrefix(message));
    const key = keyOf(id);
    if (id === REPLAY_ID) return Promise.resolve();
    if (this.#initializeIds.delete(key) && 'result' in message) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') this.#negotiated = version;
    }
    const batch = this.#batchOf.get(key);
    if (batch === undefined) return this.#write(withoutSdkPrefix(message));
    this.#batchOf.delete(key);
    batch.unanswered.delete(key);
    batch.responses.push(withoutSdkPrefix(message));
    this.#flushBatch(batch);
    return Promise.resolve();
  }

  #write(message: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#stdout.once('drain', resolve);
    });
  }
}

// `1` and `"1"` are different JSON-RPC ids.
function keyOf(id: RequestId): string {
  return `${typeof id}:${id}`;
}

/**
 * `McpError` (the SDK's) puts `MCP error <code>: ` in front of its message and the SDK sends
 * that message as is; every client adds the same prefix when it raises the error, so hosts
 * showed "MCP error -32602: MCP error -32602: Unknown tool: …".
 */
function withoutSdkPrefix(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message)) return message;
  const prefix = `MCP error ${message.error.code}: `;
  if (!message.error.message.startsWith(prefix)) return message;
  return {
    ...message,
    error: { ...message.error, message: message.error.message.slice(prefix.length) },
  };
}
