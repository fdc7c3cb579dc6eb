export { createMcpServer, type McpServerOptions } from './server';
export {
  BASE_DESCRIPTIONS,
  baseInstructions,
  INPUT_SCHEMAS,
  TOOL_NAMES,
  type ToolName,
} from './tools';
