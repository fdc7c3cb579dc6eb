import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, runBin, sandboxEnv } from './helpers/bin';
import { addToken, HubProcess, withConfigHome } from './helpers/http-hub';
import { expectEnvelope, McpServerProcess, type ToolResult } from './helpers/mcp-server';

// MCP revision 2026-07-28 (stateless: no initialize, no session, `_meta` on every request,
// `resultType` on every result) beside the 2025 revisions, over HTTP and stdio, driven by the
// SDK's v2 client pinned to that revision. The tool surface is the 2025 one.

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' as const } } };
const clients: Client[] = [];
const hubs: HubProcess[] = [];
const stdios: McpServerProcess[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const server of stdios.splice(0)) await server.close().catch(() => undefined);
  for (const hub of hubs.splice(0)) await hub.stop('SIGKILL');
});

async function connect(name: string, transport: ConstructorParameters<typeof Object>[0]) {
  const client = new Client({ name, version: '1.0.0' }, PINNED);
  await client.connect(transport as Parameters<Client['connect']>[0]);
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { text: string }[];
  return {
    isError: result.isError === true,
    structured: result.structuredContent as Record<string, unknown>,
    text: content[0]!.text,
  } satisfies ToolResult;
}

/** tools/list, a pull, a commit of a new file and an error result, as the tests need them. */
async function exercise(client: Client, dir: string, file: string) {
  const tools = (await client.listTools()).tools;
  const pulled = await call(client, 'notes_pull', {});
  expect(pulled.structured).toMatchObject({ code: 'OK', path: dir });
  writeFileSync(join(dir, file), `written over 2026-07-28\n`);
  const committed = await call(client, 'notes_commit', { message: `add ${file}` });
  expect(committed.isError, committed.text).toBe(false);
  expect(committed.structured).toMatchObject({ code: 'OK', files: [{ path: file }] });
  const refused = await call(client, 'notes_commit', { message: '   ' });
  expectEnvelope(refused, { code: 'INVALID_REQUEST', reason: 'MESSAGE_INVALID' });
  expect(refused.text).toMatch(/^INVALID_REQUEST · MESSAGE_INVALID\n/);
  return tools;
}

describe('MCP 2026-07-28 beside the 2025 revisions', () => {
  it('over HTTP: a pinned v2 client without a session, and a 2025 client on the same hub at the same time', {
    timeout: 60_000,
  }, async () => {
    const env = withConfigHome(sandboxEnv());
    const root = mkdtempSync(join(env.HOME!, 'ws-'));
    const modern = addToken(env, 'modern');
    const legacy = addToken(env, 'legacy');
    const hub = await HubProcess.start(['--workspace-root', root], {
      ...env,
      LOG_LEVEL: 'app=debug,info',
    });
    hubs.push(hub);
    const old = await hub.connect(legacy);
    const client = await connect(
      'v2-agent',
      new StreamableHTTPClientTransport(new URL(hub.url), {
        requestInit: { headers: { Authorization: `Bearer ${modern}` } },
      }),
    );
    const [tools, oldTools] = await Promise.all([
      exercise(client, join(root, 'modern'), 'modern.md'),
      old.client.listTools().then((r) => r.tools),
    ]);
    // The same two tools, schemas and descriptions in both eras.
    expect(JSON.stringify(tools)).toBe(JSON.stringify(oldTools));
    expect(client.getServerVersion()).toEqual(old.client.getServerVersion());
    // No session was opened for the stateless client: only the 2025 client's.
    expect(hub.logged('session started').map((r) => r.actor)).toEqual(['legacy']);
    // The 2025 client sees the 2026 client's commit, published as the token's actor.
    expect((await old.call('notes_pull', {})).isError).toBe(false);
    const reader = mkdtempSync(join(env.HOME!, 'reader-'));
    expect(runBin(['pull', reader], env).status).toBe(0);
    const log = JSON.parse(runBin(['log', reader, '--json'], env).stdout) as {
      publications: { actor: string; message: string }[];
    };
    expect(log.publications[0]).toMatchObject({ actor: 'modern', message: 'add modern.md' });
  });

  it("over stdio: the same surface, and the actor is the _meta client info of the client's first request", {
    timeout: 60_000,
  }, async () => {
    const env = sandboxEnv();
    // A fixed workspace root: the v2 client spawns the server twice over stdio (a probe, then
    // the connection), and keeps the instructions of the first, whose session directory is gone.
    const root = mkdtempSync(join(env.HOME!, 'ws-'));
    const legacy = await McpServerProcess.start([], sandboxEnv());
    stdios.push(legacy);
    const client = await connect(
      'v2-agent',
      new StdioClientTransport({
        command: process.execPath,
        args: [bin, 'serve', '--workspace-root', root],
        env: env as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    const dir = /^The notebook directory is (.+?)\. Call/.exec(client.getInstructions() ?? '')?.[1];
    expect(dir).toBe(root);
    const tools = await exercise(client, dir!, 'stdio.md');
    expect(JSON.stringify(tools)).toBe(JSON.stringify((await legacy.client.listTools()).tools));
    const log = JSON.parse(runBin(['log', dir!, '--json'], env).stdout) as {
      publications: { actor: string }[];
    };
    expect(log.publications[0]!.actor).toBe('v2-agent');
  });
});
