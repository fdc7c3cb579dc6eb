import { PassThrough } from 'node:stream';
import { createScrubber } from '@slivingdoc/envelope';
import { describe, expect, it } from 'vitest';
import { createMcpServer, StrictStdioServerTransport, toolCallHasDuplicateKeys } from '../src';
import { FakeNotebookService } from './fake-service';

/** A server on the strict stdio transport, driven by raw JSON-RPC lines as a host sends them. */
async function stdioServer() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new StrictStdioServerTransport(stdin, stdout);
  const errors: Error[] = [];
  const service = new FakeNotebookService();
  const server = createMcpServer({
    version: '1.0.0',
    service,
    scrubber: createScrubber({ env: {} }),
    duplicateKeys: transport.duplicateKeys,
  });
  await server.connect(transport);
  transport.onerror = (error) => errors.push(error);
  const lines: Record<string, unknown>[] = [];
  let pending = '';
  const waiters: (() => void)[] = [];
  stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let i = pending.indexOf('\n'); i !== -1; i = pending.indexOf('\n')) {
      lines.push(JSON.parse(pending.slice(0, i)));
      pending = pending.slice(i + 1);
      for (const wake of waiters.splice(0)) wake();
    }
  });
  const response = async (id: number | string) => {
    for (;;) {
      const found = lines.find((l) => l.id === id);
      if (found) return found as { result?: Record<string, unknown>; error?: { code: number } };
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const send = (line: string) => stdin.write(`${line}\n`);
  send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '0' },
      },
    }),
  );
  await response('init');
  send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  const write = (raw: string) => stdin.write(raw);
  return { send, write, response, service, errors, lines, transport };
}

const call = (id: number | string, args: string, name = 'notes_commit') =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;

describe('StrictStdioServerTransport', () => {
  it('answers a duplicate key inside arguments with INVALID_REQUEST · INVALID_ARGUMENTS', async () => {
    const { send, response, service } = await stdioServer();
    send(call(1, '{"message":"first","message":"second"}'));
    const { result } = await response(1);
    expect(result?.isError).toBe(true);
    expect(result?.structuredContent).toMatchObject({
      code: 'INVALID_REQUEST',
      reason: 'INVALID_ARGUMENTS',
    });
    expect(service.commits).toEqual([]);
  });

  it('treats keys equal after unescaping as duplicates, and forgets the mark after the call', async () => {
    const { send, response, service } = await stdioServer();
    send(call(7, '{"message":"a","\\u006dessage":"b"}'));
    expect((await response(7)).result?.isError).toBe(true);
    // The same id reused for a clean call is answered normally.
    send(call(7, '{"message":"ok"}').replace('"id":7', '"id":"7"'));
    send(call(8, '{"message":"ok"}'));
    expect((await response(8)).result?.isError).toBeUndefined();
    expect((await response('7')).result?.isError).toBeUndefined();
    expect(service.commits.map((c) => c.message)).toEqual(['ok', 'ok']);
  });

  it('refuses __proto__ as an unknown field, as JSON.parse keeps it as an own key', async () => {
    const { send, response } = await stdioServer();
    send(call(2, '{"__proto__":{"path":"/x"}}', 'notes_pull'));
    expect((await response(2)).result?.structuredContent).toMatchObject({
      reason: 'INVALID_ARGUMENTS',
    });
  });

  it('answers null and non-object arguments with -32602, as a protocol error', async () => {
    const { send, response } = await stdioServer();
    send(call(3, 'null', 'notes_pull'));
    send(call(4, '[1]', 'notes_pull'));
    expect((await response(3)).error?.code).toBe(-32602);
    expect((await response(4)).error?.code).toBe(-32602);
  });

  it('answers a tools/call without a string name with -32602, running nothing', async () => {
    const { send, response, service } = await stdioServer();
    send('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":7,"arguments":{}}}');
    send('{"jsonrpc":"2.0","id":12,"method":"tools/call"}');
    for (const id of [11, 12])
      expect((await response(id)).error).toEqual({
        code: -32602,
        message: 'Invalid tools/call request: name must be a string',
      });
    expect([service.pulls, service.commits]).toEqual([[], []]);
  });

  it('answers ping with an empty result and an unknown method with -32601', async () => {
    const { send, response } = await stdioServer();
    send('{"jsonrpc":"2.0","id":"p","method":"ping"}');
    send('{"jsonrpc":"2.0","id":"r","method":"resources/list","params":{}}');
    expect((await response('p')).result).toEqual({});
    expect((await response('r')).error).toEqual({ code: -32601, message: 'Method not found' });
  });

  it('answers an initialize without clientInfo with -32602 and keeps serving', async () => {
    const { send, response } = await stdioServer();
    send(
      '{"jsonrpc":"2.0","id":"bad","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}',
    );
    expect((await response('bad')).error?.code).toBe(-32602);
    send('{"jsonrpc":"2.0","id":"list","method":"tools/list"}');
    const tools = (await response('list')).result?.tools as { name: string }[];
    expect(tools.map((tool) => tool.name)).toEqual(['notes_pull', 'notes_commit']);
  });

  it('handles CRLF, split chunks and several messages per chunk; answers unparsable lines', async () => {
    const { write, response, errors, lines } = await stdioServer();
    const line = call(5, '{"path":""}', 'notes_pull');
    const other = call(6, '{}', 'notes_pull');
    write(`not json\r\n${line.slice(0, 20)}`);
    write(`${line.slice(20)}\r\n${other}\n`);
    expect((await response(5)).result?.structuredContent).toMatchObject({
      code: 'OK',
      path: '/w/nb',
    });
    expect((await response(6)).result?.structuredContent).toMatchObject({ code: 'OK' });
    expect(lines.filter((l) => l.id === null)).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
    ]);
    expect(errors).toEqual([]);
  });
});

describe('toolCallHasDuplicateKeys', () => {
  it.each([
    ['a repeated argument', call(1, '{"path":"a","path":"b"}'), true],
    ['a repeated key nested in an argument value', call(1, '{"path":{"a":1,"a":2}}'), true],
    [
      'a repeated arguments member',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"arguments":{}}}',
      true,
    ],
    ['distinct keys', call(1, '{"message":"m","path":"p"}'), false],
    [
      'a repeated key outside arguments',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1,"a":2},"arguments":{}}}',
      false,
    ],
    [
      'another method',
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"a":1,"a":2}}}',
      false,
    ],
    ['invalid JSON', '{"method":"tools/call",', false],
  ])('%s → %s', (_what, line, expected) => {
    expect(toolCallHasDuplicateKeys(line)).toBe(expected);
  });
});

describe('StrictStdioServerTransport.listen', () => {
  it('answers the first initialize before the SDK server connects, once, and replays it to the server', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const transport = new StrictStdioServerTransport(stdin, stdout);
    const lines: Record<string, unknown>[] = [];
    const waiters: (() => void)[] = [];
    stdout.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        lines.push(JSON.parse(line));
      for (const wake of waiters.splice(0)) wake();
    });
    const response = async (id: number) => {
      for (;;) {
        const found = lines.find((l) => l.id === id);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    transport.listen(async () => ({
      capabilities: { tools: {} },
      serverInfo: { name: 'slivingdoc', version: '1.0.0' },
      instructions: 'early',
    }));
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2024-11-05',
        capabilities: {},
        clientInfo: { name: 'early-client', version: '3' },
      },
    };
    stdin.write(`${JSON.stringify(initialize)}\n`);
    stdin.write('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
    expect(await response(1)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2024-11-05',
        capabilities: { tools: {} },
        serverInfo: { name: 'slivingdoc', version: '1.0.0' },
        instructions: 'early',
      },
    });
    expect(transport.protocolVersion).toBe('2024-11-05');
    const server = createMcpServer({
      version: '1.0.0',
      service: new FakeNotebookService(),
      scrubber: createScrubber({ env: {} }),
      duplicateKeys: transport.duplicateKeys,
    });
    await server.connect(transport);
    expect((await response(2)).result).toMatchObject({
      tools: [{ name: 'notes_pull' }, { name: 'notes_commit' }],
    });
    // The SDK server's own answer to the replayed request never reaches the client.
    expect(lines.filter((l) => l.id === 1 || l.id === 'slivingdoc:early-initialize')).toHaveLength(
      1,
    );
    expect(server.getClientVersion()).toEqual({ name: 'early-client', version: '3' });
  });
});
