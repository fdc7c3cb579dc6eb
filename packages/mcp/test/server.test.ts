import { describe, expect, it } from 'vitest';
import { BASE_DESCRIPTIONS, serverInstructions } from '../src';
import { FakeNotebookService } from './fake-service';
import { connect } from './helpers';

const INSTRUCTIONS =
  'The notebook directory is /w/nb. Call notes_pull, edit UTF-8 text files (without U+0000) there, then call notes_commit to publish. Both tools default to that directory; pass path only to address a subdirectory of it.';

describe('MCP server surface', () => {
  it('lists exactly the two tools with strict schemas and no outputSchema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools).toEqual([
      {
        name: 'notes_pull',
        description: BASE_DESCRIPTIONS.notes_pull,
        inputSchema: {
          type: 'object',
          properties: { path: { type: 'string' } },
          additionalProperties: false,
        },
      },
      {
        name: 'notes_commit',
        description: BASE_DESCRIPTIONS.notes_commit,
        inputSchema: {
          type: 'object',
          properties: { message: { type: 'string' }, path: { type: 'string' } },
          required: ['message'],
          additionalProperties: false,
        },
      },
    ]);
    expect(client.getInstructions()).toBe(INSTRUCTIONS);
    expect(client.getServerVersion()).toEqual({ name: 'slivingdoc', version: '1.2.3' });
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
  });

  it('has no prompts and no resources', async () => {
    const { client } = await connect();
    await expect(client.listPrompts()).rejects.toThrow(/-32601/);
    await expect(client.listResources()).rejects.toThrow(/-32601/);
  });

  it('appends the path-set sentences to both descriptions and the instructions', async () => {
    const service = new FakeNotebookService('/w/nb', {
      readOnly: ['notes/archive'],
      writable: ['notes'],
    });
    const { client } = await connect({ service });
    const sentences =
      ' Writable paths: notes. notes_commit refuses any change elsewhere, resets those files, and reports READ_ONLY_PATH; write only under them. Read-only paths: notes/archive. notes_commit refuses any change there, resets those files, and reports READ_ONLY_PATH; where the two sets nest, the longest matching entry decides.';
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.description)).toEqual([
      BASE_DESCRIPTIONS.notes_pull + sentences,
      BASE_DESCRIPTIONS.notes_commit + sentences,
    ]);
    expect(client.getInstructions()).toBe(INSTRUCTIONS + sentences);
  });

  it.each([
    [
      'store',
      ' This server’s store credentials can only read: notes_commit is refused with READ_ONLY_SESSION and changes nothing; notes_pull works.',
    ],
    [
      'token',
      ' This session’s token is read-only: notes_commit is refused with READ_ONLY_SESSION and changes nothing; notes_pull works.',
    ],
  ] as const)(
    'a participant whose commits are refused (%s) says so in one sentence, after the path sets',
    async (refusal, sentence) => {
      const sets = { readOnly: [], writable: ['notes'] };
      const service = new FakeNotebookService('/w/nb', sets, refusal);
      const { client } = await connect({ service });
      const pathSets =
        ' Writable paths: notes. notes_commit refuses any change elsewhere, resets those files, and reports READ_ONLY_PATH; write only under them.';
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.description)).toEqual([
        BASE_DESCRIPTIONS.notes_pull + pathSets,
        BASE_DESCRIPTIONS.notes_commit + pathSets + sentence,
      ]);
      expect(client.getInstructions()).toBe(INSTRUCTIONS + pathSets + sentence);
      // serve's early initialize answer (before the engine loads) says the same.
      expect(serverInstructions('/w/nb', sets, refusal)).toBe(INSTRUCTIONS + pathSets + sentence);
    },
  );

  it('answers an unknown tool and null arguments with protocol errors', async () => {
    const { client, service } = await connect();
    await expect(client.callTool({ name: 'notes_push', arguments: {} })).rejects.toThrow(/-32602/);
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'notes_pull', arguments: null as never } },
        (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
      ),
    ).rejects.toThrow(/-32602/);
    expect(service.pulls).toEqual([]);
  });
});
