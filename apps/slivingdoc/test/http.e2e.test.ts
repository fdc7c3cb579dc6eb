import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { until } from '@slivingdoc/testkit/until';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import {
  addToken,
  type HttpSession,
  HubProcess,
  INITIALIZE,
  mcpHeaders,
  rawRequest,
  withConfigHome,
} from './helpers/http-hub';
import { expectEnvelope, McpServerProcess, type ToolResult } from './helpers/mcp-server';

const hubs: HubProcess[] = [];
const stdios: McpServerProcess[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  for (const server of stdios.splice(0)) await server.close().catch(() => undefined);
  for (const hub of hubs.splice(0)) await hub.stop('SIGKILL');
});

const sandbox = () => withConfigHome(sandboxEnv());

async function startHub(env: NodeJS.ProcessEnv, args: string[] = []): Promise<HubProcess> {
  const hub = await HubProcess.start(args, env);
  hubs.push(hub);
  return hub;
}

/**
 * A result with the directory, the workspace root and the per-call diagnosticId made neutral,
 * for comparison: a stdio session directory is its own workspace root, a hub's sessions share
 * the hub's (docs/hosts.md, "Over HTTP").
 */
function neutral(result: ToolResult, dir: string): string {
  return JSON.stringify(result)
    .split(dir)
    .join('<DIR>')
    .split(dirname(dir))
    .join('<DIR>')
    .replace(/[0-9a-f]{16}/g, '<ID>');
}

/** The same calls on a session, in order; the session writes `a.md` between them. */
async function script(session: { call: HttpSession['call'] }, dir: string): Promise<string[]> {
  const results: ToolResult[] = [];
  results.push(await session.call('notes_pull', {}));
  results.push(await session.call('notes_commit', { message: 'x', extra: 1 }));
  results.push(await session.call('notes_commit', { message: '   ' }));
  results.push(await session.call('notes_commit', { message: 'x', path: 'never-pulled' }));
  writeFileSync(join(dir, 'a.md'), 'one\ntwo\n');
  results.push(await session.call('notes_commit', { message: 'add a' }));
  writeFileSync(join(dir, 'docs.md'), 'x\n');
  results.push(await session.call('notes_commit', { message: 'add docs' }));
  results.push(await session.call('notes_pull', {}));
  return results.map((result) => neutral(result, dir));
}

describe('serve --listen: the same surface as stdio', () => {
  it('lists the same tools and instructions and answers every call byte for byte as stdio does', async () => {
    for (const sets of [[], ['--writable', 'a.md']]) {
      const stdioEnv = sandbox();
      const stdio = await McpServerProcess.start(sets, stdioEnv);
      stdios.push(stdio);
      const env = sandbox();
      const token = addToken(env, 'alice', ...sets);
      const hub = await startHub(env);
      const session = await hub.connect(token);

      expect(JSON.stringify((await session.client.listTools()).tools)).toBe(
        JSON.stringify((await stdio.client.listTools()).tools),
      );
      expect(session.instructions.split(session.notebookDir).join('<DIR>')).toBe(
        (stdio.client.getInstructions() ?? '').split(stdio.notebookDir).join('<DIR>'),
      );
      expect(session.client.getServerVersion()).toEqual(stdio.client.getServerVersion());
      expect(session.notebookDir).toMatch(/\/slivingdoc-[^/]+\/notebook\/alice$/);
      const overHttp = await script(session, session.notebookDir);
      const overStdio = await script(stdio, stdio.notebookDir);
      expect(overHttp).toEqual(overStdio);
      // Two records per call, correlated, as over stdio.
      const started = hub.logged('tool call started').length;
      expect(started).toBe(overHttp.length);
      expect(hub.logged('tool call completed').length + hub.logged('tool call failed').length).toBe(
        started,
      );
    }
  });
});

describe('serve --listen: tokens decide actor, rights and path sets', () => {
  it('refuses to start without a token, with a configuration error', () => {
    const run = runBin(['serve', '--listen', '127.0.0.1:0'], sandbox());
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^slivingdoc: configuration — --listen needs at least one token/);
  });

  it('token list shows names and rights, never tokens; a removed token is refused at once', async () => {
    const env = sandbox();
    const token = addToken(env, 'alice');
    addToken(env, 'bob', '--read-only', '--writable', 'notes');
    const list = runBin(['token', 'list'], env);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^alice\tread-write\t\S+\nbob\tread-only writable=notes\t\S+\n$/);
    expect(
      list.stdout + readFileSync(join(env.XDG_CONFIG_HOME!, 'slivingdoc', 'tokens.json'), 'utf8'),
    ).not.toContain(token.slice(4));
    expect(runBin(['token', 'add', 'alice'], env).stderr).toMatch(
      /configuration — .*already exists/,
    );
    // One directory per name: names equal but for case would share one on macOS or Windows.
    const other = runBin(['token', 'add', 'Alice'], env);
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(
      /"alice" already exists, and "Alice" differs from it only in case/,
    );
    const hub = await startHub(env);
    const session = await hub.connect(token);
    expect((await session.call('notes_pull', {})).isError).toBe(false);
    expect(runBin(['token', 'remove', 'alice'], env).status).toBe(0);
    await expect(session.call('notes_pull', {})).rejects.toThrow(/unknown bearer token/);
    expect(runBin(['token', 'remove', 'alice'], env).status).toBe(2);
  });

  it("answers a read-only token's commit with READ_ONLY_SESSION and still pulls", async () => {
    const env = sandbox();
    const token = addToken(env, 'reader', '--read-only');
    const hub = await startHub(env);
    const session = await hub.connect(token);
    expect((await session.call('notes_pull', {})).isError).toBe(false);
    writeFileSync(join(session.notebookDir, 'a.md'), 'x\n');
    expectEnvelope(await session.call('notes_commit', { message: 'm' }), {
      code: 'READ_ONLY_SESSION',
      reason: 'TOKEN_READ_ONLY',
    });
  });

  it("applies a token's path sets to its sessions instead of the process's", async () => {
    const env = sandbox();
    const token = addToken(env, 'scribe', '--writable', 'notes');
    const hub = await startHub(env, ['--read-only', 'other']);
    const session = await hub.connect(token);
    expect(session.instructions).toContain('Writable paths: notes.');
    expect(session.instructions).not.toContain('other');
    await session.call('notes_pull', {});
    writeFileSync(join(session.notebookDir, 'outside.md'), 'x\n');
    expectEnvelope(await session.call('notes_commit', { message: 'm' }), {
      code: 'READ_ONLY_PATH',
      reason: 'CHANGE_OUTSIDE_WRITABLE',
      files: [{ path: 'outside.md', reason: 'READ_ONLY_PATH', ranges: [] }],
      sets: { writable: ['notes'], readOnly: [] },
    });
  });

  it('runs 100 concurrent sessions that pull and commit; each token is the actor in log', {
    timeout: 300_000,
  }, async () => {
    const env = sandbox();
    const names = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
    const tokens = names.map((name) => addToken(env, name));
    const hub = await startHub(env);
    const sessions = await Promise.all(
      Array.from({ length: 100 }, (_, i) => hub.connect(tokens[i % 10]!)),
    );
    // The token owns the directory: its ten sessions share one.
    const dirs = sessions.map((session) => session.notebookDir);
    expect(new Set(dirs).size).toBe(10);
    expect(dirs.filter((dir) => dir.endsWith('/agent-3'))).toHaveLength(10);
    // Ten sessions share each directory, so their calls queue on its lock; one that waits
    // past the lock timeout (a loaded machine) is PATH_BUSY, retryable, and is retried.
    const untilFree = async (call: () => Promise<ToolResult>) => {
      let result = await call();
      for (let tries = 1; result.structured.code === 'PATH_BUSY'; tries += 1) {
        if (tries === 20) throw new Error('never happened in 20 tries: the directory was free');
        result = await call();
      }
      return result;
    };
    const results = await Promise.all(
      sessions.map(async (session, i) => {
        await untilFree(() => session.call('notes_pull', {}));
        writeFileSync(join(session.notebookDir, `file-${i}.md`), `line of ${i}\n`);
        return untilFree(() => session.call('notes_commit', { message: `commit ${i}` }));
      }),
    );
    expect(results.filter((result) => result.isError).map((r) => r.text)).toEqual([]);
    const final = await sessions[0]!.call('notes_pull', {});
    expect(final.isError).toBe(false);
    for (let i = 0; i < 100; i += 1) expect(existsSync(join(dirs[0]!, `file-${i}.md`))).toBe(true);
    const reader = join(env.HOME!, 'reader');
    mkdirSync(reader);
    expect(runBin(['pull', reader], env).status).toBe(0);
    const log = runBin(['log', reader, '--json', '-n', '500'], env);
    expect(log.status).toBe(0);
    const publications = (JSON.parse(log.stdout) as { publications: { actor: string }[] })
      .publications;
    expect(new Set(publications.map((p) => p.actor))).toEqual(new Set(names));
  });
});

describe('serve --listen: refusals before any MCP handling', () => {
  it('401 without or with a wrong token, 403 for a foreign Host or Origin, 413 past 1 MiB', async () => {
    const env = sandbox();
    const token = addToken(env, 'alice');
    const hub = await startHub(env);
    const { url } = hub;
    const post = (headers: Record<string, string>, body: string | Buffer = INITIALIZE) =>
      rawRequest(url, { headers, body });

    expect((await post(mcpHeaders(url, undefined))).status).toBe(401);
    const wrong = await post(mcpHeaders(url, 'sld_wrong'));
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(
      (await post({ ...mcpHeaders(url, token), Host: `evil.example:${hub.port}` })).status,
    ).toBe(403);
    const origin = await post({ ...mcpHeaders(url, token), Origin: 'http://evil.example' });
    expect(origin.status).toBe(403);
    expect(origin.headers['access-control-allow-origin']).toBeUndefined();
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    expect((await post(mcpHeaders(url, token), big)).status).toBe(413);

    await until(() => hub.logged('request refused').length === 5, 'five refusals logged');
    const refused = hub.logged('request refused');
    expect(refused.map((r) => r.status)).toEqual([401, 401, 403, 403, 413]);
    expect(refused.every((r) => r.level === 'warn' || r.level === 40)).toBe(true);
    expect(JSON.stringify(hub.records)).not.toContain(token);
    expect(JSON.stringify(hub.records)).not.toContain(token.slice(4));
  });

  it('429 for a request beyond the calls one token may have in progress, over all its sessions', async () => {
    const env = sandbox();
    const token = addToken(env, 'alice');
    const bob = addToken(env, 'bob');
    const hub = await startHub(env, ['--token-calls', '1']);
    const session = await hub.connect(token);
    const other = await hub.connect(token);
    const headers = {
      ...mcpHeaders(hub.url, token),
      'Mcp-Session-Id': session.transport.sessionId!,
      'Mcp-Protocol-Version': '2025-06-18',
    };
    const otherHeaders = { ...headers, 'Mcp-Session-Id': other.transport.sessionId! };
    // A request whose body has not ended holds the session's one place.
    const { request } = await import('node:http');
    const slow = request(hub.url, { method: 'POST', headers });
    slow.on('error', () => undefined);
    slow.write('{"jsonrpc":"2.0",');
    // The slow request may not have reached the hub yet: ask again until it holds the place.
    let second: Awaited<ReturnType<typeof rawRequest>> | undefined;
    await until(async () => {
      second = await rawRequest(hub.url, {
        headers,
        body: '{"jsonrpc":"2.0","id":9,"method":"ping"}',
      });
      return second.status === 429;
    }, 'a second request refused with 429 while the slow one holds the place');
    expect(second?.headers['retry-after']).toBe('1');
    // The place is the token's: its other session waits too, another token does not.
    const sibling = await rawRequest(hub.url, {
      headers: otherHeaders,
      body: '{"jsonrpc":"2.0","id":10,"method":"ping"}',
    });
    expect(sibling.status).toBe(429);
    const bobs = await hub.connect(bob);
    expect((await bobs.call('notes_pull', {})).isError).toBe(false);
    slow.destroy();
  });

  it('a session answers only the token that opened it', async () => {
    const env = sandbox();
    const alice = addToken(env, 'alice');
    const bob = addToken(env, 'bob');
    const hub = await startHub(env);
    const session = await hub.connect(alice);
    const answer = await rawRequest(hub.url, {
      headers: {
        ...mcpHeaders(hub.url, bob),
        'Mcp-Session-Id': session.transport.sessionId!,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(answer.status).toBe(404);
  });
});

describe('serve --listen: the end of a session', () => {
  it('DELETE ends a session and settles nothing: the next session finds the unpublished file', async () => {
    const env = sandbox();
    const token = addToken(env, 'alice');
    const hub = await startHub(env);
    const session = await hub.connect(token);
    await session.call('notes_pull', {});
    const dir = session.notebookDir;
    writeFileSync(join(dir, 'draft.md'), 'unpublished\n');
    await session.terminate();
    await expect(session.call('notes_pull', {})).rejects.toThrow();
    const next = await hub.connect(token);
    expect(next.notebookDir).toBe(dir);
    expect(readFileSync(join(dir, 'draft.md'), 'utf8')).toBe('unpublished\n');
    const committed = await next.call('notes_commit', { message: 'the draft' });
    expect(committed.isError, committed.text).toBe(false);
  });

  it('at exit, without a workspace root, removes a token directory holding nothing unpublished and keeps one that does', async () => {
    const env = sandbox();
    const [alice, bob] = [addToken(env, 'alice'), addToken(env, 'bob')];
    const hub = await startHub(env);
    const [a, b] = [await hub.connect(alice), await hub.connect(bob)];
    await a.call('notes_pull', {});
    await b.call('notes_pull', {});
    writeFileSync(join(b.notebookDir, 'draft.md'), 'unpublished\n');
    expect(await hub.stop('SIGTERM')).toBe(0);
    expect(existsSync(a.notebookDir)).toBe(false);
    expect(readFileSync(join(b.notebookDir, 'draft.md'), 'utf8')).toBe('unpublished\n');
    expect(hub.logged('token directory kept: it holds unpublished edits')).toMatchObject([
      { actor: 'bob', dir: b.notebookDir },
    ]);
  });

  it('ends a session idle for the idle timeout; its next request is 404', async () => {
    const env = { ...sandbox(), LOG_LEVEL: 'app=debug,info' };
    const token = addToken(env, 'alice');
    const hub = await startHub(env, ['--session-idle-timeout', '1']);
    const session = await hub.connect(token);
    await session.call('notes_pull', {});
    await until(() => hub.logged('session idle: ending it').length === 1, 'the idle session ended');
    const answer = await rawRequest(hub.url, {
      headers: {
        ...mcpHeaders(hub.url, token),
        'Mcp-Session-Id': session.transport.sessionId!,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(answer.status).toBe(404);
  });

  it('SIGTERM answers the calls in flight, then ends every session and exits 0', async () => {
    const env = { ...sandbox(), LOG_LEVEL: 'app=debug,info' };
    // A token each: eight calls in flight at once, none waiting for another's directory.
    const tokens = Array.from({ length: 8 }, (_, i) => addToken(env, `agent-${i}`));
    const hub = await startHub(env);
    const sessions = await Promise.all(tokens.map((token) => hub.connect(token)));
    for (const session of sessions) await session.call('notes_pull', {});
    const calls = sessions.map((session, i) => {
      writeFileSync(join(session.notebookDir, `f${i}.md`), `${i}\n`);
      return session.call('notes_commit', { message: `c${i}` });
    });
    await until(
      () =>
        hub.records.filter((r) => r.msg === 'tool call started' && r.tool === 'notes_commit')
          .length === 8,
      'eight commits started',
    );
    hub.child.kill('SIGTERM');
    const results = await Promise.all(calls);
    expect(results.map((r) => r.isError)).toEqual(Array(8).fill(false));
    expect(await hub.exited).toBe(0);
    expect(hub.logged('session ended')).toHaveLength(8);
  });
});

describe('serve --listen: a hub killed mid-burst', () => {
  it('restarts, repairs every directory and loses no acknowledged line', {
    timeout: 300_000,
  }, async () => {
    const env = sandbox();
    const root = mkdtempSync(join(env.HOME!, 'ws-'));
    const names = ['a', 'b', 'c', 'd'];
    const tokens = names.map((name) => addToken(env, name));
    const args = ['--workspace-root', root];
    let hub = await startHub(env, args);
    const acknowledged = new Map<string, string[]>(names.map((n) => [n, []]));
    const sessions = await Promise.all(tokens.map((token) => hub.connect(token)));
    let killed = false;
    const writers = names.map(async (name, index) => {
      const session = sessions[index]!;
      await session.call('notes_pull', {});
      for (let i = 0; !killed; i += 1) {
        const line = `${name} line ${i}`;
        const file = join(session.notebookDir, `${name}.md`);
        writeFileSync(file, `${existsSync(file) ? readFileSync(file, 'utf8') : ''}${line}\n`);
        const result = await session.call('notes_commit', { message: line }).catch(() => undefined);
        if (result === undefined) return;
        if (!result.isError) acknowledged.get(name)!.push(line);
      }
    });
    await until(
      () => [...acknowledged.values()].every((lines) => lines.length >= 3),
      'three acknowledged commits per writer',
      { withinMs: 120_000 },
    );
    killed = true;
    await hub.stop('SIGKILL');
    // The calls in flight when the hub died end with the connection.
    await Promise.all(sessions.map((session) => session.close().catch(() => undefined)));
    await Promise.all(writers);

    hub = await startHub(env, args);
    for (const [index, name] of names.entries()) {
      const session = await hub.connect(tokens[index]!);
      expect(session.notebookDir).toBe(join(root, name));
      const pulled = await session.call('notes_pull', {});
      expect(pulled.isError, pulled.text).toBe(false);
    }
    // An independent reader: a fresh directory pulled by the CLI holds every acknowledged line.
    const reader = join(env.HOME!, 'reader');
    mkdirSync(reader);
    expect(runBin(['pull', reader], env).status).toBe(0);
    for (const [name, lines] of acknowledged) {
      const text = readFileSync(join(reader, `${name}.md`), 'utf8');
      for (const line of lines) expect(text).toContain(`${line}\n`);
    }
  });
});

describe('serve --listen: one object database for every session (docs/engine.md)', () => {
  const NOT_SHARED =
    'the object database is not shared: another process holds it; each directory keeps its own';

  it('a directory served by the hub, then by a stdio server, then by the hub again: every call OK, no line lost', {
    timeout: 120_000,
  }, async () => {
    const env = sandbox();
    const root = mkdtempSync(join(env.HOME!, 'ws-'));
    const token = addToken(env, 'alice');
    const args = ['--workspace-root', root];
    const dir = join(root, 'alice');
    const lines: string[] = [];
    const commitLine = async (call: HttpSession['call'], line: string, path?: string) => {
      const file = join(dir, 'alice.md');
      writeFileSync(file, `${existsSync(file) ? readFileSync(file, 'utf8') : ''}${line}\n`);
      const result = await call('notes_commit', { message: line, ...(path ? { path } : {}) });
      expect(result.isError, result.text).toBe(false);
      lines.push(line);
    };

    let hub = await startHub(env, args);
    let session = await hub.connect(token);
    expect(session.notebookDir).toBe(dir);
    expect((await session.call('notes_pull', {})).isError).toBe(false);
    await commitLine(session.call.bind(session), 'hub line 1');
    expect(hub.logged(NOT_SHARED)).toHaveLength(0);
    expect(await hub.stop('SIGTERM')).toBe(0);

    // A stdio server of the same private root: this directory's objects in its own P.
    const stdio = await McpServerProcess.start(args, env);
    stdios.push(stdio);
    const pulled = await stdio.call('notes_pull', { path: dir });
    expect(pulled.isError, pulled.text).toBe(false);
    await commitLine(stdio.call.bind(stdio), 'stdio line 1', dir);
    await stdio.close();
    stdios.splice(stdios.indexOf(stdio), 1);

    hub = await startHub(env, args);
    session = await hub.connect(token);
    await commitLine(session.call.bind(session), 'hub line 2');
    expect((await session.call('notes_pull', {})).isError).toBe(false);
    const text = readFileSync(join(dir, 'alice.md'), 'utf8');
    for (const line of lines) expect(text).toContain(`${line}\n`);
    const reader = join(env.HOME!, 'reader');
    mkdirSync(reader);
    expect(runBin(['pull', reader], env).status).toBe(0);
    expect(readFileSync(join(reader, 'alice.md'), 'utf8')).toBe(text);
  });

  it('a hub killed at each step of consolidating the shared database: the next hub repairs, no line lost', {
    timeout: 300_000,
  }, async () => {
    for (const step of [
      'consolidation-after-pack-written',
      'consolidation-after-indexes-removed',
      'consolidation-after-files-removed',
    ]) {
      const env: NodeJS.ProcessEnv = { ...sandbox(), SLIVINGDOC_TEST_CONSOLIDATE: 'always' };
      const root = mkdtempSync(join(env.HOME!, 'ws-'));
      const names = ['a', 'b', 'c'];
      const tokens = names.map((name) => addToken(env, name));
      const args = ['--workspace-root', root];
      const acknowledged: string[] = [];
      const commitLine = async (session: HttpSession, name: string, line: string) => {
        const file = join(session.notebookDir, `${name}.md`);
        writeFileSync(file, `${existsSync(file) ? readFileSync(file, 'utf8') : ''}${line}\n`);
        const result = await session.call('notes_commit', { message: line }).catch(() => undefined);
        if (result !== undefined && !result.isError) acknowledged.push(line);
        return result;
      };
      // Every session's directory holds objects in the shared database.
      let hub = await startHub(env, args);
      for (const [index, name] of names.entries()) {
        const session = await hub.connect(tokens[index]!);
        expect((await session.call('notes_pull', {})).isError).toBe(false);
        await commitLine(session, name, `${name} before`);
      }
      expect(await hub.stop('SIGTERM')).toBe(0);
      // The next hub dies in its first consolidation, after a's commit.
      hub = await startHub({ ...env, SLIVINGDOC_FAILPOINTS: `${step}=kill` }, args);
      const a = await hub.connect(tokens[0]!);
      await commitLine(a, 'a', `a during ${step}`);
      expect(await hub.exited).not.toBe(0);
      hub = await startHub(env, args);
      for (const [index, name] of names.entries()) {
        const session = await hub.connect(tokens[index]!);
        const pulled = await session.call('notes_pull', {});
        expect(pulled.isError, pulled.text).toBe(false);
        const result = await commitLine(session, name, `${name} after ${step}`);
        expect(result?.isError, result?.text).toBe(false);
      }
      const reader = join(env.HOME!, 'reader');
      mkdirSync(reader);
      expect(runBin(['pull', reader], env).status).toBe(0);
      const text = names.map((name) => readFileSync(join(reader, `${name}.md`), 'utf8')).join('');
      for (const line of acknowledged) expect(text).toContain(`${line}\n`);
      await hub.stop('SIGTERM');
    }
  });

  it('a second hub on the same private root cannot claim the database and still serves', {
    timeout: 120_000,
  }, async () => {
    const env = sandbox();
    const tokens = [addToken(env, 'alice'), addToken(env, 'bob')];
    // One workspace root, so one private root (a hub without one has a session directory each).
    const args = ['--workspace-root', mkdtempSync(join(env.HOME!, 'ws-'))];
    const first = await startHub(env, args);
    const second = await startHub(env, args);
    const [a, b] = [await first.connect(tokens[0]!), await second.connect(tokens[1]!)];
    expect((await a.call('notes_pull', {})).isError).toBe(false);
    expect((await b.call('notes_pull', {})).isError).toBe(false);
    writeFileSync(join(a.notebookDir, 'a.md'), 'from the first hub\n');
    expect((await a.call('notes_commit', { message: 'a' })).isError).toBe(false);
    writeFileSync(join(b.notebookDir, 'b.md'), 'from the second hub\n');
    const committed = await b.call('notes_commit', { message: 'b' });
    expect(committed.isError, committed.text).toBe(false);
    expect((await a.call('notes_pull', {})).isError).toBe(false);
    expect(readFileSync(join(a.notebookDir, 'b.md'), 'utf8')).toBe('from the second hub\n');
    expect(readFileSync(join(b.notebookDir, 'a.md'), 'utf8')).toBe('from the first hub\n');
    // The first hub claimed the shared database; the second logged its fallback once.
    expect(first.logged(NOT_SHARED)).toHaveLength(0);
    expect(second.logged(NOT_SHARED)).toHaveLength(1);
  });
});
