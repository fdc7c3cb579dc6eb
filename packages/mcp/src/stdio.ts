/**
 * `@slivingdoc/mcp/stdio`: the stdio transport and the instructions text without the engine,
 * so a server can read stdin and answer `initialize` before loading it (the main entry
 * imports the engine's types and the tool calls).
 */
export { isJsonRpcMessage } from './jsonrpc';
export {
  BATCH_PROTOCOL_VERSIONS,
  negotiateProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol-versions';
export {
  type EarlyInitializeResult,
  type ProtocolLogger,
  StrictStdioServerTransport,
} from './strict-stdio';
export { serverInstructions } from './tools';
