import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { NotebookService } from '@slivingdoc/engine';
import type { Scrubber } from '@slivingdoc/envelope';
import { runToolCall } from './call';
import { type CallLogger, silentLogger } from './call-log';
import type { DuplicateKeyLedger } from './duplicate-keys';
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  isRequest,
  METHOD_NOT_FOUND,
  ProtocolError,
} from './jsonrpc';
import { negotiateProtocolVersion } from './protocol-versions';
import {
  discoverResult,
  isStatelessRequest,
  statelessClientInfo,
  statelessResult,
} from './stateless';
import {
  INPUT_SCHEMAS,
  serverInstructions,
  TOOL_NAMES,
  toolDescription,
  withReviewSentence,
} from './tools';

/** What the adapter needs to build a server. */
export interface McpServerOptions {
  /** Release version advertised as the implementation version. */
  version: string;
  /** The engine; its `sets` and `notebookDir` shape every text surface. */
  service: NotebookService;
  /** The process's scrubber (private root, AWS secrets from the environment). */
  scrubber: Scrubber;
  /** Receives the two records per call (pino-compatible); default: none. */
  logger?: CallLogger;
  /** Duplicate-key marks from the transport (`StrictStdioServerTransport.duplicateKeys`). */
  duplicateKeys?: DuplicateKeyLedger;
  /** Home directory for `~/` in `path`; default `os.homedir()`. */
  home?: string;
  /** Source of per-call ids; default `newDiagnosticId` (tests inject a fixed one). */
  newDiagnosticId?: () => string;
  /**
   * The configured actor (`--actor`): the author name of every commit. Absent: the client's
   * `clientInfo.name` from initialize, made a valid author name ({@link actorFromClientName}).
   */
  actor?: string;
}

/**
 * The author name for a client that named itself `name` in initialize: characters an author
 * name cannot hold (control characters, `<`, `>`) dropped, cut to 64 bytes of UTF-8 on a
 * character boundary, blanks trimmed; `undefined` (the engine's `slivingdoc`) when nothing is left.
 */
export function actorFromClientName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  let kept = '';
  for (const char of name
    .replace(/[\p{Cc}<>]/gu, '')
    .replace(/\p{Surrogate}/gu, '')
    .trim()) {
    if (Buffer.byteLength(kept + char, 'utf8') > 64) break;
    kept += char;
  }
  kept = kept.trim();
  return kept === '' ? undefined : kept;
}

const actorOption = (actor: string | undefined) => (actor === undefined ? {} : { actor });

/** The client's `clientInfo` from its `initialize`. */
export interface ClientInfo {
  name: string;
  version: string;
}

type Request = Extract<JSONRPCMessage, { id: RequestId; method: string }>;
type Params = Record<string, unknown> | undefined;

/**
 * The MCP server of the two tools, speaking the protocol itself over an SDK `Transport`:
 * `initialize`, `ping`, `tools/list`, `tools/call` and `notifications/cancelled`; every other
 * method is -32601, as the SDK's `Server` answers it. Written by hand rather than on the
 * SDK's `Server`: that class parses every message with zod schemas and loads ajv, about
 * 24 MiB resident in each server process (docs/performance.md, "Idle memory and start-up"),
 * for a surface of four methods. Behaves like the SDK's `Server` on every message it answers
 * (`test/server.test.ts` drives it with the SDK's `Client`): a cancelled request gets no
 * response, closing the transport aborts every call in progress.
 */
export class NotebookMcpServer {
  /** Called once the transport has closed (by either side). */
  onclose?: () => void;
  readonly #options: McpServerOptions;
  readonly #tools: readonly Record<string, unknown>[];
  readonly #instructions: string;
  readonly #reviewTools: readonly Record<string, unknown>[];
  readonly #reviewInstructions: string;
  #transport: Transport | undefined;
  #client: ClientInfo | undefined;
  #statelessSeen = false;
  /** Requests being answered, so a cancellation or a close can abort them. */
  readonly #inFlight = new Map<RequestId, AbortController>();

  constructor(options: McpServerOptions) {
    const { service } = options;
    this.#options = options;
    const refused = service.commitsRefused;
    this.#instructions = serverInstructions(service.notebookDir, service.sets, refused);
    this.#tools = TOOL_NAMES.map((name) => ({
      name,
      description: toolDescription(name, service.sets, refused),
      inputSchema: INPUT_SCHEMAS[name],
    }));
    this.#reviewInstructions = withReviewSentence(this.#instructions, true);
    this.#reviewTools = this.#tools.map((tool) =>
      tool.name === 'notes_commit'
        ? { ...tool, description: withReviewSentence(tool.description as string, true) }
        : tool,
    );
  }

  /**
   * Whether review applies now: read from the store on each initialize and tools/list, so a
   * change takes effect without a restart. A setting that cannot be read shows no sentence;
   * the commit itself then fails closed with its error.
   */
  async #reviewApplies(signal: AbortSignal, clientName?: string): Promise<boolean> {
    const actor = this.#options.actor ?? actorFromClientName(clientName ?? this.#client?.name);
    return this.#options.service.reviewApplies({ actor, signal }).catch(() => false);
  }

  /** Takes over `transport`'s callbacks and starts it. */
  async connect(transport: Transport): Promise<void> {
    if (this.#transport) throw new Error('the MCP server is already connected');
    this.#transport = transport;
    transport.onmessage = (message) => this.#receive(message);
    transport.onclose = () => this.#closed();
    await transport.start();
  }

  /** Closes the transport; calls in progress are aborted and answer nothing. */
  async close(): Promise<void> {
    await this.#transport?.close();
  }

  /** The client's `clientInfo`, once it has sent `initialize`. */
  getClientVersion(): ClientInfo | undefined {
    return this.#client;
  }

  #closed(): void {
    this.#transport = undefined;
    for (const controller of this.#inFlight.values()) controller.abort();
    this.#inFlight.clear();
    this.onclose?.();
  }

  #receive(message: JSONRPCMessage): void {
    // A response: this server sends no requests, so there is nothing to match it with.
    if (!('method' in message)) return;
    if (isRequest(message)) {
      void this.#respond(message);
      return;
    }
    if (message.method === 'notifications/cancelled') {
      const requestId = (message.params as Params)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number')
        this.#inFlight.get(requestId)?.abort((message.params as Params)?.reason);
    }
  }

  async #respond(request: Request): Promise<void> {
    const transport = this.#transport;
    const controller = new AbortController();
    this.#inFlight.set(request.id, controller);
    let response: JSONRPCMessage;
    try {
      response = await this.answer(request, controller.signal);
    } finally {
      if (this.#inFlight.get(request.id) === controller) this.#inFlight.delete(request.id);
    }
    // MCP: a cancelled request gets no response at all.
    if (controller.signal.aborted || transport === undefined) return;
    await transport.send(response).catch((error: unknown) => {
      transport.onerror?.(new Error('could not send a response', { cause: error }));
    });
  }

  /**
   * The response to one request, without a transport: how `serve --listen` answers a
   * sessionless 2026-07-28 POST. A 2026-07-28 request's result carries `resultType`; over a
   * transport the first such request's `_meta` client info is the client's for good.
   */
  async answer(request: Request, signal: AbortSignal): Promise<JSONRPCMessage> {
    const stateless = isStatelessRequest(request.params);
    if (stateless && !this.#statelessSeen) {
      // The first 2026-07-28 request names the client for good (its actor over stdio).
      this.#statelessSeen = true;
      this.#client ??= statelessClientInfo(request.params);
    }
    try {
      const result = await this.#handle(request, signal);
      return {
        jsonrpc: '2.0',
        id: request.id,
        result: stateless ? statelessResult(request.method, result) : result,
      };
    } catch (error) {
      return { jsonrpc: '2.0', id: request.id, error: errorOf(error) };
    }
  }

  async #handle(request: Request, signal: AbortSignal): Promise<Record<string, unknown>> {
    const params = request.params as Params;
    switch (request.method) {
      case 'initialize': {
        const name = (params?.clientInfo as Params)?.name;
        const review = await this.#reviewApplies(
          signal,
          typeof name === 'string' ? name : undefined,
        );
        return this.#initialize(params, review);
      }
      case 'server/discover': {
        const review = await this.#reviewApplies(signal);
        return discoverResult({
          version: this.#options.version,
          instructions: review ? this.#reviewInstructions : this.#instructions,
        });
      }
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: (await this.#reviewApplies(signal)) ? this.#reviewTools : this.#tools };
      case 'tools/call':
        return this.#call(request.id, params, signal);
      default:
        throw new ProtocolError(METHOD_NOT_FOUND, 'Method not found');
    }
  }

  #initialize(params: Params, review: boolean): Record<string, unknown> {
    const clientInfo = params?.clientInfo as Params;
    const capabilities = params?.capabilities;
    if (
      typeof params?.protocolVersion !== 'string' ||
      typeof capabilities !== 'object' ||
      capabilities === null ||
      typeof clientInfo?.name !== 'string' ||
      typeof clientInfo.version !== 'string'
    )
      throw new ProtocolError(
        INVALID_PARAMS,
        'Invalid initialize request: params need protocolVersion (a string), capabilities (an object) and clientInfo with name and version (strings)',
      );
    this.#client = { name: clientInfo.name, version: clientInfo.version };
    return {
      protocolVersion: negotiateProtocolVersion(params.protocolVersion),
      capabilities: { tools: {} },
      serverInfo: { name: 'slivingdoc', version: this.#options.version },
      instructions: review ? this.#reviewInstructions : this.#instructions,
    };
  }

  async #call(id: RequestId, params: Params, signal: AbortSignal) {
    const name = params?.name;
    const rawArguments = params?.arguments;
    if (typeof name !== 'string')
      throw new ProtocolError(INVALID_PARAMS, 'Invalid tools/call request: name must be a string');
    // Null or non-object arguments are protocol errors, as the SDK answers them (contract §2).
    if (
      rawArguments !== undefined &&
      (typeof rawArguments !== 'object' || rawArguments === null || Array.isArray(rawArguments))
    )
      throw new ProtocolError(
        INVALID_PARAMS,
        'Invalid tools/call request: arguments must be an object',
      );
    const options = this.#options;
    return runToolCall(
      {
        tool: name,
        rawArguments: rawArguments as Record<string, unknown> | undefined,
        duplicateKeys: options.duplicateKeys?.consume(id) ?? false,
        signal,
      },
      {
        service: options.service,
        scrubber: options.scrubber,
        logger: options.logger ?? silentLogger,
        ...(options.home !== undefined ? { home: options.home } : {}),
        ...(options.newDiagnosticId ? { newDiagnosticId: options.newDiagnosticId } : {}),
        ...actorOption(options.actor ?? actorFromClientName(this.#client?.name)),
      },
    );
  }
}

/** The error member of a response, as the SDK builds it from a thrown error. */
function errorOf(error: unknown): { code: number; message: string; data?: unknown } {
  const code = (error as { code?: unknown })?.code;
  const message = (error as { message?: unknown })?.message;
  const data = (error as { data?: unknown })?.data;
  return {
    code: Number.isSafeInteger(code) ? (code as number) : INTERNAL_ERROR,
    message: typeof message === 'string' ? message : 'Internal error',
    ...(data !== undefined ? { data } : {}),
  };
}

/**
 * Builds the MCP server with exactly two tools, no prompts and no resources. `arguments`
 * reach our strict decoder untouched. Tools declare no `outputSchema` (the client would
 * validate error envelopes against it).
 *
 * Calls run concurrently; calls on one notebook directory are serialised by the engine,
 * which knows the directory's identity (its realpath) and holds its lock.
 */
export function createMcpServer(options: McpServerOptions): NotebookMcpServer {
  return new NotebookMcpServer(options);
}
