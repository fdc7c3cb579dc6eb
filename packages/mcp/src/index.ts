export { runToolCall, type ToolCall, type ToolCallContext } from './call';
export { type CallLogger, type LoggedError, loggedError, silentLogger } from './call-log';
export { type DecodedArguments, decodeArguments } from './decode';
export {
  batchCallsWithDuplicateKeys,
  DuplicateKeyLedger,
  toolCallHasDuplicateKeys,
} from './duplicate-keys';
export { isJsonRpcMessage, ProtocolError } from './jsonrpc';
export {
  BATCH_PROTOCOL_VERSIONS,
  negotiateProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol-versions';
export {
  actorFromClientName,
  type ClientInfo,
  createMcpServer,
  type McpServerOptions,
  NotebookMcpServer,
} from './server';
export { isStatelessRequest, STATELESS_PROTOCOL_VERSION } from './stateless';
export {
  type EarlyInitializeResult,
  type ProtocolLogger,
  StrictStdioServerTransport,
} from './strict-stdio';
export {
  BASE_DESCRIPTIONS,
  baseInstructions,
  INPUT_SCHEMAS,
  serverInstructions,
  TOOL_NAMES,
  type ToolName,
} from './tools';
