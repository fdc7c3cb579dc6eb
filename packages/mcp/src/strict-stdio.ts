import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { DuplicateKeyLedger, toolCallHasDuplicateKeys } from './duplicate-keys';

/** Lines longer than this are refused (the SDK's stdio transport uses the same bound). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * MCP over stdio, newline-delimited JSON-RPC like the SDK's `StdioServerTransport`, except
 * that each incoming line is also scanned strictly: a `tools/call` whose `arguments` repeat a
 * key is recorded in {@link duplicateKeys} before the message is handed on, since the SDK's
 * parse silently keeps one of the two values (SPEC §2). Written as a whole transport because
 * the SDK's class parses lines in a private method.
 */
export class StrictStdioServerTransport implements Transport {
  /** Pass to `createMcpServer({ duplicateKeys })`. */
  readonly duplicateKeys = new DuplicateKeyLedger();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #buffer: Buffer = Buffer.alloc(0);
  #started = false;
  readonly #stdin: Readable;
  readonly #stdout: Writable;

  constructor(stdin: Readable = process.stdin, stdout: Writable = process.stdout) {
    this.#stdin = stdin;
    this.#stdout = stdout;
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (let end = this.#buffer.indexOf(0x0a); end !== -1; end = this.#buffer.indexOf(0x0a)) {
      const line = this.#buffer.toString('utf8', 0, end).replace(/\r$/, '');
      this.#buffer = this.#buffer.subarray(end + 1);
      this.#receive(line);
    }
    if (this.#buffer.length > MAX_LINE_BYTES) {
      this.#buffer = Buffer.alloc(0);
      this.onerror?.(new Error(`an incoming line exceeded ${MAX_LINE_BYTES} bytes`));
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    void this.close();
  };

  #receive(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if ('method' in message && 'id' in message && toolCallHasDuplicateKeys(line))
      this.duplicateKeys.mark(message.id);
    this.onmessage?.(message);
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StrictStdioServerTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
    this.#stdin.on('end', this.#onEnd);
  }

  async close(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdin.off('end', this.#onEnd);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#buffer = Buffer.alloc(0);
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#stdout.once('drain', resolve);
    });
  }
}
