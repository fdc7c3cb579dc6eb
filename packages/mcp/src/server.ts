import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  BASE_DESCRIPTIONS,
  baseInstructions,
  INPUT_SCHEMAS,
  TOOL_NAMES,
  type ToolName,
} from './tools';

/** What the adapter needs to build a server. */
export interface McpServerOptions {
  /** Release version advertised as the implementation version. */
  version: string;
  /** The server's own notebook directory (named in the instructions). */
  notebookDir: string;
  /** Answers a tool call whose tool name is known; arguments arrive raw. */
  callTool: (tool: ToolName, rawArguments: unknown, signal: AbortSignal) => Promise<CallToolResult>;
}

const isToolName = (name: string): name is ToolName =>
  (TOOL_NAMES as readonly string[]).includes(name);

/**
 * Builds the low-level MCP server with exactly two tools, no prompts and no resources.
 * The low-level `Server` is used so `arguments` reach our strict decoder untouched.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const server = new Server(
    { name: 'slivingdoc', version: options.version },
    { capabilities: { tools: {} }, instructions: baseInstructions(options.notebookDir) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOL_NAMES.map((name) => ({
      name,
      description: BASE_DESCRIPTIONS[name],
      inputSchema: INPUT_SCHEMAS[name],
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    if (!isToolName(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    return options.callTool(name, request.params.arguments, extra.signal);
  });
  return server;
}
