import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

// JSON-RPC 2.0 edge cases through the built bin over real stdio: every malformed input gets
// an answer and one warn record, never silence (docs/hosts.md, "JSON-RPC").

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});
function start(): RawServer {
  const server = new RawServer();
  servers.push(server);
  return server;
}

type Message = { id?: unknown; error?: { code: number; message: string }; result?: unknown };
const isError = (code: number) => (m: unknown) =>
  !Array.isArray(m) && (m as Message).error?.code === code;

/** The refusals logged: each one warn record from the mcp module. */
function refusals(server: RawServer) {
  return server
    .records()
    .filter((r) => r.msg === 'JSON-RPC input refused')
    .map((r) => ({ level: r.level, module: r.module, code: r.jsonrpcCode }));
}

async function finish(server: RawServer) {
  server.child.stdin.end();
  expect(await server.exited).toEqual({ code: 0, signal: null });
  // Stdout stays pure JSON-RPC: every line a message or a batch of messages.
  for (const line of server.stdoutLines) {
    const parsed = JSON.parse(line) as unknown;
    for (const message of Array.isArray(parsed) ? parsed : [parsed])
      expect((message as { jsonrpc: string }).jsonrpc).toBe('2.0');
  }
}

describe('JSON-RPC input the protocol says to answer', () => {
  it('a line that is not JSON gets -32700 Parse error with id null, before and after initialize', async () => {
    const server = start();
    server.sendLine('{"jsonrpc":"2.0","id":1,');
    expect(await server.message(isError(-32700))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
    await server.initialize();
    server.sendLine('not json at all');
    await server.message((m) => server.stdoutLines.length >= 3 && isError(-32700)(m));
    expect(server.stdoutLines.filter((l) => l.includes('-32700'))).toHaveLength(2);
    await finish(server);
    expect(refusals(server)).toEqual([
      { level: 'warn', module: 'mcp', code: -32700 },
      { level: 'warn', module: 'mcp', code: -32700 },
    ]);
  });

  it.each([
    ['a number', '5', null],
    ['a string', '"hello"', null],
    ['null', 'null', null],
    ['no jsonrpc member', '{"id":7,"method":"ping"}', 7],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":8,"method":"ping"}', 8],
    ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}', null],
    ['a method that is not a string', '{"jsonrpc":"2.0","id":"s","method":5}', 's'],
    ['params that are not an object', '{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}', 9],
    ['an unknown member', '{"jsonrpc":"2.0","id":10,"method":"ping","extra":1}', 10],
  ])('%s gets -32600 Invalid Request (its id when readable)', async (_what, line, id) => {
    const server = start();
    await server.initialize();
    server.sendLine(line);
    const answer = (await server.message(isError(-32600))) as Message;
    expect(answer.id).toEqual(id);
    expect(answer.error?.message).toMatch(/^Invalid Request/);
    // The server keeps serving after it.
    expect((await server.request(20, 'ping')).result).toEqual({});
    await finish(server);
    expect(refusals(server)).toEqual([{ level: 'warn', module: 'mcp', code: -32600 }]);
  });

  it('an unknown tool is -32602 without a doubled "MCP error" prefix', async () => {
    const server = start();
    await server.initialize();
    const answer = await server.request(2, 'tools/call', { name: 'notes_delete', arguments: {} });
    expect(answer.error).toEqual({ code: -32602, message: 'Unknown tool: notes_delete' });
    await finish(server);
  });
});

describe('JSON-RPC batches', () => {
  it('with 2025-03-26 negotiated, a batch is processed and answered as one array', async () => {
    const server = start();
    const init = await server.initialize('2025-03-26');
    expect((init.result as { protocolVersion: string }).protocolVersion).toBe('2025-03-26');
    server.sendLine(
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
        {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 1, progress: 1 },
        },
        {
          jsonrpc: '2.0',
          id: 'b',
          method: 'tools/call',
          params: { name: 'notes_pull', arguments: {} },
        },
        {
          jsonrpc: '2.0',
          id: 'c',
          method: 'tools/call',
          params: { name: 'notes_commit', arguments: { message: 'm', message2: 'x' } },
        },
        { not: 'a message' },
        { jsonrpc: '2.0', id: 'd', method: 'initialize', params: {} },
      ]),
    );
    const batch = (await server.message(Array.isArray)) as Message[];
    const byId = new Map(batch.map((m) => [m.id, m]));
    expect(batch).toHaveLength(5); // the notification gets no response
    expect(byId.get('a')?.result).toMatchObject({
      tools: [{ name: 'notes_pull' }, { name: 'notes_commit' }],
    });
    expect(byId.get('b')?.result).toMatchObject({ structuredContent: { code: 'OK' } });
    expect(byId.get('c')?.result).toMatchObject({
      isError: true,
      structuredContent: { reason: 'INVALID_ARGUMENTS' },
    });
    expect(byId.get('d')?.error?.code).toBe(-32600);
    expect(byId.get(null)?.error?.code).toBe(-32600);
    await finish(server);
    expect(refusals(server)).toHaveLength(2);
  });

  it('a batch whose arguments repeat a key is refused per call, as a single line would be', async () => {
    const server = start();
    await server.initialize('2025-03-26');
    server.sendLine(
      '[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_pull","arguments":{"path":"","path":""}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
    );
    const batch = (await server.message(Array.isArray)) as Message[];
    expect(batch.find((m) => m.id === 1)?.result).toMatchObject({
      structuredContent: { reason: 'INVALID_ARGUMENTS' },
    });
    expect(batch.find((m) => m.id === 2)?.result).toEqual({});
    await finish(server);
  });

  it.each(['2025-11-25', '2025-06-18', '2024-11-05', '2024-10-07'])(
    'with %s negotiated, a batch is refused with one -32600',
    async (version) => {
      const server = start();
      const init = await server.initialize(version);
      expect((init.result as { protocolVersion: string }).protocolVersion).toBe(version);
      server.sendLine(JSON.stringify([{ jsonrpc: '2.0', id: 5, method: 'ping' }]));
      const answer = (await server.message(isError(-32600))) as Message;
      expect(answer).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: batches are not part of MCP protocol version ${version}`,
        },
      });
      // The ping inside it was not run.
      expect(server.stdoutLines.some((l) => l.includes('"id":5'))).toBe(false);
      await finish(server);
      expect(refusals(server)).toEqual([{ level: 'warn', module: 'mcp', code: -32600 }]);
    },
  );

  it('a batch before initialize and an empty batch are refused', async () => {
    const server = start();
    server.sendLine('[{"jsonrpc":"2.0","id":5,"method":"ping"}]');
    expect(((await server.message(isError(-32600))) as Message).error?.message).toBe(
      'Invalid Request: a batch before initialize',
    );
    await server.initialize('2025-03-26');
    server.sendLine('[]');
    await server.message(
      (m) => (m as Message).error?.message === 'Invalid Request: an empty batch',
    );
    await finish(server);
    expect(refusals(server)).toHaveLength(2);
  });
});
