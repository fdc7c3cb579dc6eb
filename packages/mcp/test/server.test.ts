import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { BASE_DESCRIPTIONS, createMcpServer } from '../src';

async function connect() {
  const server = createMcpServer({
    version: '0.1.0',
    notebookDir: '/tmp/nb',
    callTool: async (tool) => ({ content: [{ type: 'text', text: tool }] }),
  });
  const client = new Client({ name: 't', version: '0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  return client;
}

describe('MCP server surface', () => {
  it('lists exactly the two tools with strict schemas', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['notes_pull', 'notes_commit']);
    expect(tools[0]?.description).toBe(BASE_DESCRIPTIONS.notes_pull);
    expect(tools[1]?.inputSchema).toEqual({
      type: 'object',
      properties: { message: { type: 'string' }, path: { type: 'string' } },
      required: ['message'],
      additionalProperties: false,
    });
    expect(client.getInstructions()).toBe(
      'The notebook directory is /tmp/nb. Call notes_pull, edit UTF-8 text files (without U+0000) there, then call notes_commit to publish. Both tools default to that directory; pass path only to address a subdirectory of it.',
    );
    expect(client.getServerVersion()).toEqual({ name: 'slivingdoc', version: '0.1.0' });
  });

  it('answers an unknown tool with a protocol error', async () => {
    const client = await connect();
    await expect(client.callTool({ name: 'notes_push', arguments: {} })).rejects.toThrow(/-32602/);
  });
});
