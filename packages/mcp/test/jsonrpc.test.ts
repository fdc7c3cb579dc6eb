import {
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { isJsonRpcMessage, SUPPORTED_PROTOCOL_VERSIONS as OURS } from '../src/stdio';

// The transport's hand-written checks stand in for the SDK's zod schemas on the start-up
// path; these tests keep them equal to what the SDK accepts.

const CASES: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'ping' },
  { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x', arguments: {} } },
  { jsonrpc: '2.0', id: 1.5, method: 'ping' },
  { jsonrpc: '2.0', id: null, method: 'ping' },
  { jsonrpc: '2.0', id: true, method: 'ping' },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: null },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: 5 } },
  { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: {} } },
  { jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 },
  { jsonrpc: '2.0', id: 1, method: 7 },
  { jsonrpc: '1.0', id: 1, method: 'ping' },
  { id: 1, method: 'ping' },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/initialized', params: {} },
  { jsonrpc: '2.0', method: 'notifications/initialized', other: {} },
  { jsonrpc: '2.0', id: 3, result: {} },
  { jsonrpc: '2.0', id: 3, result: [] },
  { jsonrpc: '2.0', id: 3, result: 5 },
  { jsonrpc: '2.0', result: {} },
  { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'x' } },
  { jsonrpc: '2.0', error: { code: -1, message: 'x', data: [1] } },
  { jsonrpc: '2.0', id: 3, error: { code: 1.5, message: 'x' } },
  { jsonrpc: '2.0', id: 3, error: { code: 1 } },
  { jsonrpc: '2.0', id: 3, error: 'bad' },
  { jsonrpc: '2.0' },
  null,
  5,
  'text',
  [],
];

describe('isJsonRpcMessage', () => {
  it.each(CASES.map((value) => [JSON.stringify(value), value]))(
    '%s: the same verdict as the SDK schema',
    (_text, value) => {
      expect(isJsonRpcMessage(value)).toBe(JSONRPCMessageSchema.safeParse(value).success);
    },
  );
});

describe('SUPPORTED_PROTOCOL_VERSIONS', () => {
  it("is the SDK's list, newest first", () => {
    expect([...OURS]).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
  });
});
