import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BASE_DESCRIPTIONS } from '@slivingdoc/mcp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };

const bin = join(import.meta.dirname, '../dist/cli.js');
const clients: Client[] = [];

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build the app first (pnpm build)`);
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

describe('the built bin', () => {
  it('prints its version', () => {
    expect(execFileSync(process.execPath, [bin, 'version'], { encoding: 'utf8' })).toBe(
      `slivingdoc ${pkg.version}\n`,
    );
  });

  it('serves MCP over real stdio with exactly the two tools', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'serve'],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e', version: '0' });
    clients.push(client);
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('slivingdoc');
    expect(client.getInstructions()).toMatch(
      /^The notebook directory is \/.+slivingdoc-.+\/notebook\. Call notes_pull/,
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.description])).toEqual([
      ['notes_pull', BASE_DESCRIPTIONS.notes_pull],
      ['notes_commit', BASE_DESCRIPTIONS.notes_commit],
    ]);
    for (const tool of tools) expect(tool.inputSchema.additionalProperties).toBe(false);
  });
});
