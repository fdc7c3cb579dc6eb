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
      },
    );
  });
  return server;
}
