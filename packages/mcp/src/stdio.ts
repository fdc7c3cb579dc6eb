/**
 * `@slivingdoc/mcp/stdio`: the stdio transport and the instructions text without the MCP
 * SDK's runtime or zod, so a server can read stdin and answer `initialize` before loading
 * them (the main entry imports the SDK's `Server`).
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
