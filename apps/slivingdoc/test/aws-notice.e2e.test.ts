/**
 * On Node 20 the AWS SDK prints a multi-line notice about its own future Node
 * support (`NodeVersionSupportWarning`, through `process.emitWarning`) when a client is made.
 * A user's stderr (an MCP host shows the server's) must never carry it raw: the server's
 * stderr holds only structured log records, and a one-shot command at the default level
 * prints nothing there. The environment below leaves the SDK's own opt-out unset, as a user's
 * does. On Node 22 and later the SDK emits nothing, so there these cases hold trivially.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBinAsync, sandboxEnv } from './helpers/bin';
import { McpServerProcess } from './helpers/mcp-server';
import { realS3Env } from './helpers/real-s3';

beforeAll(assertBuilt);

const NOTICE = /NodeVersionSupportWarning|AWS SDK for JavaScript/;

async function userEnv(): Promise<NodeJS.ProcessEnv> {
  const env = sandboxEnv(await realS3Env());
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  delete env.LOG_LEVEL;
  return env;
}

describe('the AWS SDK notice never reaches a user raw (Node 20)', () => {
  it('serve on the real S3 server: every stderr line is one structured record, none the notice', async () => {
    const env = await userEnv();
    const workspace = join(env.HOME!, 'ws');
    mkdirSync(workspace);
    const server = await McpServerProcess.start(['--workspace-root', workspace], env, 'aws-notice');
    try {
      expect((await server.call('notes_pull', {})).structured.code).toBe('OK');
      writeFileSync(join(server.notebookDir, 'a.md'), 'one\n');
      expect((await server.call('notes_commit', { message: 'm' })).structured.code).toBe('OK');
    } finally {
      await server.close();
    }
    const lines = server.stderrLines.filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(() => JSON.parse(line), line).not.toThrow();
      expect(line).not.toMatch(NOTICE);
    }
  });

  it('a user who turned the notice on gets it as exactly one warn record (on Node 20), never raw', async () => {
    const env = await userEnv();
    // The SDK prints unless the variable is exactly "true"; the store leaves a set value alone.
    env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'false';
    const workspace = join(env.HOME!, 'ws');
    mkdirSync(workspace);
    const server = await McpServerProcess.start(['--workspace-root', workspace], env, 'on');
    try {
      expect((await server.call('notes_pull', {})).structured.code).toBe('OK');
    } finally {
      await server.close();
    }
    const records = server.stderrLines
      .filter((line) => line !== '')
      .map(
        (line) => JSON.parse(line) as { level: number; msg: string; warning?: { message: string } },
      );
    const notices = records.filter((r) => NOTICE.test(r.warning?.message ?? ''));
    const major = Number(process.versions.node.split('.')[0]);
    expect(notices).toHaveLength(major < 22 ? 1 : 0);
    for (const notice of notices)
      expect(notice).toMatchObject({ level: 'warn', msg: 'process warning' });
  });

  it('a one-shot status on the real S3 server prints nothing on stderr at the default level', async () => {
    const env = await userEnv();
    const dir = join(env.HOME!, 'nb');
    const pulled = await runBinAsync(['pull', dir], env);
    expect(pulled.status, pulled.stderr).toBe(0);
    const status = await runBinAsync(['status', dir], env);
    expect(status.status, status.stderr).toBe(0);
    expect(pulled.stderr + status.stderr).not.toMatch(NOTICE);
    expect(status.stderr).toBe('');
  });
});
