import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { until } from '@slivingdoc/testkit/until';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import {
  addToken,
  HubProcess,
  INITIALIZE,
  mcpHeaders,
  rawRequest,
  withConfigHome,
} from './helpers/http-hub';
import { expectEnvelope, type ToolResult } from './helpers/mcp-server';

// The token, not the session, owns the directory (docs/hosts.md, "Over HTTP"): every client
// of token NAME works in W/NAME however it connects, sessions are cheap and never crowd out
// work, and a token reaches only its own directory.

const hubs: HubProcess[] = [];
const clients: Client[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const hub of hubs.splice(0)) await hub.stop('SIGKILL');
});

const appDir = join(import.meta.dirname, '..');

/** A sandbox with a token file and a fresh workspace root. */
function workspace(): { env: NodeJS.ProcessEnv; root: string } {
  const env = withConfigHome(sandboxEnv());
  return { env, root: mkdtempSync(join(env.HOME!, 'ws-')) };
}

async function startHub(env: NodeJS.ProcessEnv, args: string[]): Promise<HubProcess> {
  const hub = await HubProcess.start(args, env);
  hubs.push(hub);
  return hub;
}

/** A tool call through an SDK client, reduced to what the tests compare. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { text: string }[];
  return {
    isError: result.isError === true,
    structured: result.structuredContent as Record<string, unknown>,
    text: content[0]!.text,
  } satisfies ToolResult;
}

/** The hub as a stdio-only host reaches it: the real `mcp-remote` bridge, spawned over stdio. */
async function bridge(hub: HubProcess, token: string): Promise<Client> {
  const client = new Client({ name: 'stdio-host', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: join(appDir, 'node_modules', '.bin', 'mcp-remote'),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote expands it (docs/hosts.md)
      args: [hub.url, '--header', 'Authorization:${SLIVINGDOC_AUTH}'],
      env: { ...(process.env as Record<string, string>), SLIVINGDOC_AUTH: `Bearer ${token}` },
      stderr: 'ignore',
    }),
  );
  clients.push(client);
  return client;
}

/** A POST whose body never ends: it holds a place in flight until destroyed. */
function holdRequest(url: string, headers: Record<string, string>): () => void {
  const slow = request(url, { method: 'POST', headers });
  slow.on('error', () => undefined);
  slow.write('{"jsonrpc":"2.0",');
  return () => slow.destroy();
}

/** Asks until the answer has `status` (a held request may not have reached the hub yet). */
async function untilStatus(ask: () => ReturnType<typeof rawRequest>, status: number) {
  let answer: Awaited<ReturnType<typeof rawRequest>> | undefined;
  await until(async () => {
    answer = await ask();
    return answer.status === status;
  }, `an answer with status ${status}`);
  return answer!;
}

/** Every line of `file` in a fresh directory pulled by the CLI: what the store holds. */
function published(env: NodeJS.ProcessEnv, file: string): string {
  const reader = mkdtempSync(join(env.HOME!, 'reader-'));
  expect(runBin(['pull', reader], env).status).toBe(0);
  const path = join(reader, file);
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

describe('a token owns its directory', () => {
  it('mcp-remote: a pull lands in W/NAME; a second bridge after the first exits lands there and finds its unpublished file', {
    timeout: 60_000,
  }, async () => {
    const { env, root } = workspace();
    const token = addToken(env, 'remote');
    const hub = await startHub(env, ['--workspace-root', root]);
    const first = await bridge(hub, token);
    const pulled = await call(first, 'notes_pull', {});
    expect(pulled.structured).toMatchObject({ code: 'OK', path: join(root, 'remote') });
    writeFileSync(join(root, 'remote', 'draft.md'), 'from the first bridge\n');
    await first.close();

    const second = await bridge(hub, token);
    const again = await call(second, 'notes_pull', {});
    expect(again.structured).toMatchObject({ code: 'OK', path: join(root, 'remote') });
    expect(readFileSync(join(root, 'remote', 'draft.md'), 'utf8')).toBe('from the first bridge\n');
    const committed = await call(second, 'notes_commit', { message: 'the first bridge draft' });
    expect(committed.isError, committed.text).toBe(false);
    expect(published(env, 'draft.md')).toBe('from the first bridge\n');
    // One directory for both bridges (`.view` is the web view's, pulled by its first request).
    expect(readdirSync(root).filter((name) => name !== '.view')).toEqual(['remote']);
  });

  it('three health checks (initialize, tools/list, no DELETE), then a real session pulls into W/NAME', async () => {
    const { env, root } = workspace();
    const token = addToken(env, 'claude');
    const hub = await startHub(env, ['--workspace-root', root]);
    for (let i = 0; i < 3; i += 1) {
      const check = await hub.connect(token);
      expect((await check.client.listTools()).tools).toHaveLength(2);
      // Closing the client sends nothing: the session is abandoned, as `claude mcp list` does.
      await check.close();
    }
    const session = await hub.connect(token);
    expect(session.notebookDir).toBe(join(root, 'claude'));
    const pulled = await session.call('notes_pull', {});
    expect(pulled.structured).toMatchObject({ code: 'OK', path: join(root, 'claude') });
    expect(readdirSync(root)).toEqual(['claude']);
  });

  it('two concurrent sessions of one token commit 50 times each to their own file: all acknowledged, nothing lost, one directory', {
    timeout: 120_000,
  }, async () => {
    const { env, root } = workspace();
    const token = addToken(env, 'pair');
    const hub = await startHub(env, ['--workspace-root', root]);
    const sessions = [await hub.connect(token), await hub.connect(token)];
    expect(sessions[0]!.notebookDir).toBe(sessions[1]!.notebookDir);
    await sessions[0]!.call('notes_pull', {});
    const dir = sessions[0]!.notebookDir;
    const acknowledged = await Promise.all(
      sessions.map(async (session, index) => {
        const file = join(dir, `writer-${index}.md`);
        let text = '';
        const lines: string[] = [];
        for (let i = 0; i < 50; i += 1) {
          const line = `writer ${index} line ${i}`;
          text += `${line}\n`;
          writeFileSync(file, text);
          const result = await session.call('notes_commit', { message: line });
          expect(result.isError, result.text).toBe(false);
          lines.push(line);
        }
        return lines;
      }),
    );
    expect(acknowledged.flat()).toHaveLength(100);
    for (const [index, lines] of acknowledged.entries())
      expect(published(env, `writer-${index}.md`)).toBe(lines.map((l) => `${l}\n`).join(''));
    expect(readdirSync(root)).toEqual(['pair']);
  });

  it("a token's path to another token's directory or to the view's is refused, and nothing is read or changed", async () => {
    const { env, root } = workspace();
    const alice = addToken(env, 'alice');
    const bob = addToken(env, 'bob');
    const hub = await startHub(env, ['--workspace-root', root]);
    const b = await hub.connect(bob);
    await b.call('notes_pull', {});
    writeFileSync(join(root, 'bob', 'secret.md'), 'unpublished by bob\n');
    // The view's own participant is pulled by its first page.
    const page = await rawRequest(`http://127.0.0.1:${hub.port}/?token=${bob}`, {
      method: 'GET',
      headers: { Host: `127.0.0.1:${hub.port}` },
    });
    expect(page.status).toBeLessThan(400);
    await until(() => existsSync(join(root, '.view')), 'the view pulled its directory');
    const before = JSON.stringify([readdirSync(root).sort(), readdirSync(join(root, 'bob'))]);

    const a = await hub.connect(alice);
    const outside = [
      join(root, 'bob'),
      join(root, 'bob', 'sub'),
      `${join(root, 'alice')}/../bob`,
      join(root, '.view'),
      root,
      '/etc',
    ];
    for (const path of outside) {
      for (const [tool, args] of [
        ['notes_pull', { path }],
        ['notes_commit', { path, message: 'steal' }],
      ] as const) {
        const refused = await a.call(tool, args);
        const envelope = expectEnvelope(refused, {
          code: 'INVALID_REQUEST',
          reason: 'PATH_OUTSIDE_TOKEN_DIR',
        });
        expect(envelope.message).toContain(join(root, 'alice'));
      }
    }
    expect(JSON.stringify([readdirSync(root).sort(), readdirSync(join(root, 'bob'))])).toBe(before);
    expect(readFileSync(join(root, 'bob', 'secret.md'), 'utf8')).toBe('unpublished by bob\n');
    expect(published(env, 'secret.md')).toBe('');
    // Its own directory still answers.
    expect((await a.call('notes_pull', { path: join(root, 'alice') })).isError).toBe(false);
  });

  it('a token removed and added again under its old name takes up its old directory', async () => {
    const { env, root } = workspace();
    const first = addToken(env, 'alice');
    const hub = await startHub(env, ['--workspace-root', root]);
    const before = await hub.connect(first);
    await before.call('notes_pull', {});
    writeFileSync(join(root, 'alice', 'draft.md'), 'kept across tokens\n');
    expect(runBin(['token', 'remove', 'alice'], env).status).toBe(0);
    const again = addToken(env, 'alice');
    const after = await hub.connect(again);
    expect(after.notebookDir).toBe(join(root, 'alice'));
    const pulled = await after.call('notes_pull', {});
    expect(pulled.structured).toMatchObject({ code: 'OK', path: join(root, 'alice') });
    expect(readFileSync(join(root, 'alice', 'draft.md'), 'utf8')).toBe('kept across tokens\n');
  });

  it('warns once at start-up about leftover NAME+N directories with unpublished edits, and deletes none', async () => {
    const { env, root } = workspace();
    const token = addToken(env, 'alice');
    mkdirSync(join(root, 'alice+2'));
    writeFileSync(join(root, 'alice+2', 'draft.md'), 'left by an earlier release\n');
    mkdirSync(join(root, 'alice+3'));
    const hub = await startHub(env, ['--workspace-root', root]);
    const warning =
      'directories of an earlier release (NAME+N) hold unpublished edits: publish them with "slivingdoc commit DIR -m …"; they are never deleted';
    await until(() => hub.logged(warning).length === 1, 'the leftover warning');
    expect(hub.logged(warning)[0]!.dirs).toEqual([join(root, 'alice+2')]);
    const session = await hub.connect(token);
    expect(session.notebookDir).toBe(join(root, 'alice'));
    await hub.stop('SIGTERM');
    expect(existsSync(join(root, 'alice+3'))).toBe(true);
    expect(readFileSync(join(root, 'alice+2', 'draft.md'), 'utf8')).toBe(
      'left by an earlier release\n',
    );
    expect(hub.logged(warning)).toHaveLength(1);
  });
});

describe('sessions are cheap and never crowd out work', () => {
  it('300 sessions abandoned with --max-sessions 256: the next agent is served, the oldest session is 404', {
    timeout: 120_000,
  }, async () => {
    const { env, root } = workspace();
    const token = addToken(env, 'alice');
    const hub = await startHub(env, ['--workspace-root', root, '--max-sessions', '256']);
    const ids: string[] = [];
    for (let i = 0; i < 300; i += 1) {
      const answer = await rawRequest(hub.url, {
        headers: mcpHeaders(hub.url, token),
        body: INITIALIZE,
      });
      expect(answer.status).toBe(200);
      ids.push(answer.headers['mcp-session-id'] as string);
    }
    const agent = await hub.connect(token);
    const pulled = await agent.call('notes_pull', {});
    expect(pulled.structured).toMatchObject({ code: 'OK', path: join(root, 'alice') });
    const evicted = await rawRequest(hub.url, {
      headers: {
        ...mcpHeaders(hub.url, token),
        'Mcp-Session-Id': ids[0]!,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(evicted.status).toBe(404);
    expect(hub.logged('request refused').map((r) => r.status)).toEqual([404]);
  });

  it('503 only when every session has a request in flight; an open GET stream alone is idle', async () => {
    const { env, root } = workspace();
    const [alice, bob] = [addToken(env, 'alice'), addToken(env, 'bob')];
    const hub = await startHub(env, ['--workspace-root', root, '--max-sessions', '1']);
    const busy = await hub.connect(alice);
    const headers = {
      ...mcpHeaders(hub.url, alice),
      'Mcp-Session-Id': busy.transport.sessionId!,
      'Mcp-Protocol-Version': '2025-06-18',
    };
    const release = holdRequest(hub.url, headers);
    const refused = await untilStatus(
      () => rawRequest(hub.url, { headers: mcpHeaders(hub.url, bob), body: INITIALIZE }),
      503,
    );
    expect(refused.headers['retry-after']).toBe('5');
    // Bob's flood evicts nothing busy: alice's session still answers once its request ends.
    release();
    await until(() => hub.logged('request refused').length >= 1, 'the 503 logged');
    const listed = await untilStatus(
      () =>
        rawRequest(hub.url, {
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
        }),
      200,
    );
    expect(listed.body).toContain('notes_pull');
    // Idle now (the SDK client keeps its GET stream open): the next agent takes its place.
    const next = await hub.connect(bob);
    expect((await next.call('notes_pull', {})).isError).toBe(false);
    await expect(busy.client.listTools()).rejects.toThrow();
  });

  it('OAuth discovery paths answer 404, so a client uses the header it was given', async () => {
    const { env, root } = workspace();
    addToken(env, 'alice');
    const hub = await startHub(env, ['--workspace-root', root]);
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const answer = await rawRequest(`http://127.0.0.1:${hub.port}${path}`, {
        method: 'GET',
        headers: { Host: `127.0.0.1:${hub.port}` },
      });
      expect(answer.status, path).toBe(404);
    }
  });

  it('prints a plain-words banner on stdout; the logs stay JSON on stderr', async () => {
    const { env, root } = workspace();
    addToken(env, 'alice');
    const hub = await startHub(env, ['--workspace-root', root]);
    await until(() => hub.stdout.includes('tokens:'), 'the whole banner on stdout');
    const base = `http://127.0.0.1:${hub.port}`;
    expect(hub.stdout).toBe(
      [
        `slivingdoc hub: MCP for many agents at ${base}/mcp`,
        `  add it to Claude Code:  claude mcp add --transport http slivingdoc ${base}/mcp --header "Authorization: Bearer <token>"`,
        `  the web view:           ${base}/?token=<token>`,
        "  tokens:                 slivingdoc token add NAME prints one; NAME is the agent's actor and directory",
        '',
      ].join('\n'),
    );
  });
});
