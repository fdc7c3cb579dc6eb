import { existsSync, statSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { assertBuilt, sandboxEnv } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});
function start(args: string[] = [], env?: NodeJS.ProcessEnv): RawServer {
  const server = new RawServer(args, env);
  servers.push(server);
  return server;
}

const MODULES = ['app', 'cli', 'mcp', 'engine', 'store'];

describe('serve over real stdio', () => {
  it('stdout carries only JSON-RPC; every log record is pino JSON on stderr', async () => {
    const server = start([], sandboxEnv({ LOG_LEVEL: 'trace' }));
    const init = await server.initialize();
    expect(init.result).toMatchObject({
      serverInfo: { name: 'slivingdoc', version: pkg.version },
      capabilities: { tools: {} },
    });
    const instructions = (init.result as { instructions: string }).instructions;
    const notebookDir = /^The notebook directory is (\/.+\/slivingdoc-[^/]+\/notebook)\. /.exec(
      instructions,
    )?.[1];
    expect(notebookDir).toBeDefined();

    const list = await server.request(2, 'tools/list');
    expect((list.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'notes_pull',
      'notes_commit',
    ]);
    const bad = await server.request(3, 'tools/call', {
      name: 'notes_commit',
      arguments: { message: 'x', extra: true },
    });
    expect(bad.result).toMatchObject({
      isError: true,
      structuredContent: { code: 'INVALID_REQUEST', reason: 'INVALID_ARGUMENTS' },
    });
    const pull = await server.request(4, 'tools/call', { name: 'notes_pull', arguments: {} });
    expect(pull.result).toMatchObject({ structuredContent: { code: 'OK', path: notebookDir } });

    // The session directory is private to this user while the server runs.
    expect(statSync(`${notebookDir}/..`).mode & 0o777).toBe(0o700);
    expect(existsSync(`${notebookDir}/../private`)).toBe(true);
    server.child.stdin.end();
    expect(await server.exited).toEqual({ code: 0, signal: null });

    for (const line of server.stdoutLines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      expect(message.jsonrpc).toBe('2.0');
    }
    expect(server.stdoutLines).toHaveLength(4);
    const records = server.records();
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(record.level);
      expect(MODULES).toContain(record.module);
      expect(typeof record.msg).toBe('string');
    }
    // Exactly two records per call, sharing a fresh mcpReqID; for an error it is the
    // envelope's diagnosticId.
    const calls = records.filter(
      (r) => r.msg === 'tool call started' || r.msg === 'tool call completed',
    );
    expect(calls.map((r) => [r.module, r.msg, r.tool])).toEqual([
      ['mcp', 'tool call started', 'notes_commit'],
      ['mcp', 'tool call completed', 'notes_commit'],
      ['mcp', 'tool call started', 'notes_pull'],
      ['mcp', 'tool call completed', 'notes_pull'],
    ]);
    const diagnosticId = (bad.result as { structuredContent: { diagnosticId: string } })
      .structuredContent.diagnosticId;
    expect(calls[0]?.mcpReqID).toBe(diagnosticId);
    expect(calls[1]).toMatchObject({ mcpReqID: diagnosticId, outcome: 'INVALID_REQUEST' });
    expect(calls[2]?.mcpReqID).toBe(calls[3]?.mcpReqID);
    expect(calls[2]?.mcpReqID).not.toBe(diagnosticId);
    expect(calls[3]).toMatchObject({ outcome: 'OK' });
    // Nothing unpublished was left: the session directory went with the process
    // (test/session-dir.test.ts covers the other cases).
    expect(existsSync(`${notebookDir}/..`)).toBe(false);
  });

  it('LOG_LEVEL silences one module and keeps the others', async () => {
    const server = start([], sandboxEnv({ LOG_LEVEL: 'mcp=silent,info' }));
    await server.initialize();
    await server.request(2, 'tools/call', { name: 'notes_pull', arguments: { path: 'relative' } });
    server.child.stdin.end();
    await server.exited;
    const modules = new Set(server.records().map((r) => r.module));
    expect(modules.has('mcp')).toBe(false);
    expect(modules.has('app')).toBe(true);
  });

  it('a malformed LOG_LEVEL warns once and logs at info', async () => {
    const server = start([], sandboxEnv({ LOG_LEVEL: 'mcp=loud' }));
    await server.initialize();
    server.child.stdin.end();
    await server.exited;
    const records = server.records();
    expect(records[0]).toMatchObject({
      level: 'warn',
      module: 'app',
      msg: 'malformed LOG_LEVEL; logging at info',
    });
    expect(records.filter((r) => r.level === 'debug' || r.level === 'trace')).toEqual([]);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('%s shuts down cleanly with exit 0', async (signal) => {
    const server = start();
    await server.initialize();
    server.child.kill(signal);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const messages = server.records().map((r) => [r.module, r.msg, r.why]);
    expect(messages).toContainEqual(['app', 'shutting down', signal]);
    expect(messages).toContainEqual(['app', 'stopped', undefined]);
  });
});
