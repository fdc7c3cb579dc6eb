import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * JSON-RPC 2.0 message shapes as the SDK's `JSONRPCMessageSchema` accepts them (request,
 * notification, result, error; each with no extra member), checked by hand: the SDK's schema
 * is zod, and loading zod before the first `initialize` is answered would double the
 * server's start-up time (docs/hosts.md, "Start-up"). `test/jsonrpc.test.ts` checks this
 * function against the SDK schema.
 */
export function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (!isObject(value) || value.jsonrpc !== '2.0') return false;
  if ('method' in value) {
    if (typeof value.method !== 'string') return false;
    if ('params' in value && !isParams(value.params)) return false;
    return 'id' in value
      ? isRequestId(value.id) && onlyKeys(value, ['jsonrpc', 'id', 'method', 'params'])
      : onlyKeys(value, ['jsonrpc', 'method', 'params']);
  }
  if ('result' in value)
    return isRequestId(value.id) && isObject(value.result) && onlyKeys(value, RESULT_KEYS);
  if ('error' in value) {
    const { error } = value;
    return (
      (!('id' in value) || isRequestId(value.id)) &&
      isObject(error) &&
      Number.isInteger(error.code) &&
      typeof error.message === 'string' &&
      onlyKeys(value, ERROR_KEYS)
    );
  }
  return false;
}

const RESULT_KEYS = ['jsonrpc', 'id', 'result'];
const ERROR_KEYS = ['jsonrpc', 'id', 'error'];

/** A JSON-RPC id as MCP allows it: a string or an integer (never null). */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || Number.isInteger(value);
}

/** A request (method and id) among valid messages. */
export function isRequest(
  message: JSONRPCMessage,
): message is Extract<JSONRPCMessage, { method: string; id: RequestId }> {
  return 'method' in message && 'id' in message;
}

/** A response (result or error) with an id among valid messages. */
export function responseId(message: JSONRPCMessage): RequestId | undefined {
  return !('method' in message) && 'id' in message && isRequestId(message.id)
    ? message.id
    : undefined;
}

function isParams(value: unknown): boolean {
  return isObject(value) && (!('_meta' in value) || isObject(value._meta));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

/** The JSON-RPC 2.0 error codes the transport and the server answer with. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** The SDK's `ErrorCode.ConnectionClosed`, which its clients raise for a cancelled request. */
export const REQUEST_CANCELLED = -32000;

/**
 * A request answered with a JSON-RPC error rather than a result: `message` is sent as is
 * (no `MCP error <code>: ` prefix; clients add their own).
 */
export class ProtocolError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
    this.data = data;
  }
}

/** An error response (`id: null` when the request's id could not be determined). */
export function errorResponse(
  id: RequestId | null,
  code: number,
  message: string,
): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The id an invalid request is answered with: its own when readable, else null. */
export function idOf(value: unknown): RequestId | null {
  return isObject(value) && isRequestId(value.id) ? value.id : null;
}
