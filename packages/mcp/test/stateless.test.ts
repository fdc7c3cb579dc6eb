import { createScrubber } from '@slivingdoc/envelope';
import { describe, expect, it } from 'vitest';
import { createMcpServer, SUPPORTED_PROTOCOL_VERSIONS } from '../src';
import { FakeNotebookService } from './fake-service';

// The stateless revision 2026-07-28 answered beside the 2025 ones by the same server: the
// same results, plus what that revision itself requires.

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'modern agent', version: '2.0.0' },
};

function server(actor?: string) {
  const service = new FakeNotebookService();
  const made = createMcpServer({
    version: '1.2.3',
    service,
    scrubber: createScrubber({ privateRoot: '/var/p', env: {} }),
    newDiagnosticId: () => '0011223344556677',
    ...(actor === undefined ? {} : { actor }),
  });
  const answer = (id: number, method: string, params?: Record<string, unknown>) =>
    made.answer(
      { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) },
      new AbortController().signal,
    ) as Promise<{ result?: Record<string, unknown>; error?: { code: number } }>;
  return { service, answer };
}

describe('MCP 2026-07-28 on the server', () => {
  it('server/discover names every revision, the tools capability, the instructions and the server', async () => {
    const { result } = await server().answer(1, 'server/discover', { _meta: META });
    expect(result).toEqual({
      supportedVersions: ['2026-07-28', ...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: { tools: {} },
      instructions: expect.stringMatching(/^The notebook directory is /),
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'slivingdoc', version: '1.2.3' } },
      resultType: 'complete',
    });
  });

  it("adds resultType (and the list's cache hints) to a 2026 result, and nothing to a 2025 one", async () => {
    const { answer } = server();
    const legacy = await answer(1, 'tools/list');
    const modern = await answer(2, 'tools/list', { _meta: META });
    expect(modern.result).toEqual({
      ...legacy.result,
      ttlMs: 0,
      cacheScope: 'private',
      resultType: 'complete',
    });
    const call = await answer(3, 'tools/call', { name: 'notes_pull', arguments: {}, _meta: META });
    const plain = await answer(4, 'tools/call', { name: 'notes_pull', arguments: {} });
    expect(call.result).toEqual({ ...plain.result, resultType: 'complete' });
    expect(Object.keys(plain.result ?? {})).not.toContain('resultType');
    // A protocol error stays a JSON-RPC error in both eras.
    expect((await answer(5, 'tools/call', { name: 'nope', _meta: META })).error?.code).toBe(-32602);
  });

  it("takes the actor from the first 2026 request's client info, for good", async () => {
    const { answer, service } = server();
    await answer(1, 'tools/list', { _meta: META });
    const other = {
      ...META,
      'io.modelcontextprotocol/clientInfo': { name: 'other', version: '1' },
    };
    await answer(2, 'tools/call', {
      name: 'notes_commit',
      arguments: { message: 'm' },
      _meta: other,
    });
    expect(service.commits.map((commit) => commit.actor)).toEqual(['modern agent']);
  });

  it('a configured actor wins over the client info', async () => {
    const { answer, service } = server('alice');
    await answer(1, 'tools/call', {
      name: 'notes_commit',
      arguments: { message: 'm' },
      _meta: META,
    });
    expect(service.commits.map((commit) => commit.actor)).toEqual(['alice']);
  });
});
