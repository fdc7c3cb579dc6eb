export { runToolCall, type ToolCall, type ToolCallContext } from './call';
export { type CallLogger, type LoggedError, loggedError, silentLogger } from './call-log';
export { type DecodedArguments, decodeArguments } from './decode';
export { DuplicateKeyLedger, toolCallHasDuplicateKeys } from './duplicate-keys';
export { actorFromClientName, createMcpServer, type McpServerOptions } from './server';
export { StrictStdioServerTransport } from './strict-stdio';
export {
  BASE_DESCRIPTIONS,
  baseInstructions,
  INPUT_SCHEMAS,
  TOOL_NAMES,
  type ToolName,
} from './tools';
