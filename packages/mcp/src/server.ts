import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { NotebookService } from '@slivingdoc/engine';
import { type Scrubber, withPathSetSentences } from '@slivingdoc/envelope';
import { z } from 'zod';
import { runToolCall } from './call';
import { type CallLogger, silentLogger } from './call-log';
import type { DuplicateKeyLedger } from './duplicate-keys';
import { BASE_DESCRIPTIONS, baseInstructions, INPUT_SCHEMAS, TOOL_NAMES } from './tools';

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

/**
 * Lets every `tools/call` through the SDK's first parse. With the SDK's own schema, null or
 * non-object `arguments` fail that parse and come back as -32603; with this one they reach
 * the `Server`'s tools/call validation and come back as -32602 (SPEC §2).
 */
const RawCallToolRequestSchema = z.object({
  method: z.literal('tools/call'),
  params: z.looseObject({ name: z.string(), arguments: z.unknown().optional() }),
});

const actorOption = (actor: string | undefined) => (actor === undefined ? {} : { actor });

/**
 * Builds the low-level MCP server with exactly two tools, no prompts and no resources. The
 * low-level `Server` is used so `arguments` reach our strict decoder untouched. Tools declare
 * no `outputSchema` (the client would validate error envelopes against it).
 *
 * Calls run concurrently; calls on one notebook directory are serialised by the engine,
 * which knows the directory's identity (its realpath) and holds its lock.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const { service } = options;
  const server = new Server(
    { name: 'slivingdoc', version: options.version },
    {
      capabilities: { tools: {} },
      instructions: withPathSetSentences(baseInstructions(service.notebookDir), service.sets),
    },
  );
  const tools = TOOL_NAMES.map((name) => ({
    name,
    description: withPathSetSentences(BASE_DESCRIPTIONS[name], service.sets),
    inputSchema: INPUT_SCHEMAS[name],
  }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(RawCallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const duplicateKeys = options.duplicateKeys?.consume(extra.requestId) ?? false;
    // An unknown name is refused there, as -32602.
    return runToolCall(
      {
        tool: name,
        // The SDK validated it as an object or absent before this handler runs.
        rawArguments: request.params.arguments as Record<string, unknown> | undefined,
        duplicateKeys,
        signal: extra.signal,
      },
      {
        service,
        scrubber: options.scrubber,
        logger: options.logger ?? silentLogger,
        ...(options.home !== undefined ? { home: options.home } : {}),
        ...(options.newDiagnosticId ? { newDiagnosticId: options.newDiagnosticId } : {}),
        ...actorOption(options.actor ?? actorFromClientName(server.getClientVersion()?.name)),
      },
    );
  });
  return server;
}
