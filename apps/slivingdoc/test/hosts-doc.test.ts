import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProvidedS3 } from '@slivingdoc/testkit/rgw-global-setup';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, sandboxEnv } from './helpers/bin';
import { RawServer } from './helpers/raw-server';

// Every snippet of docs/hosts.md, as a new user would paste it into a fresh project: the
// `claude mcp add` lines parsed with Claude Code's syntax, every configured command started
// with its arguments and environment, and an MCP handshake completed over real stdio.

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

const page = readFileSync(join(import.meta.dirname, '../../../docs/hosts.md'), 'utf8');

/** A server as a host would start it. */
interface Configured {
  where: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Shell steps the page asks for first (`mkdir -p notes`). */
  setup: string[];
}

function fencedBlocks(lang: string): { text: string; line: number }[] {
  const blocks: { text: string; line: number }[] = [];
  const pattern = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm');
  for (const match of page.matchAll(pattern))
    blocks.push({
      text: match[1] ?? '',
      line: page.slice(0, match.index).split('\n').length,
    });
  return blocks;
}

/** POSIX-shell words of one command line: plain words and double quotes (all the page uses). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
}

/**
 * `claude mcp add [options] <name> -- <command> [args…]` (Claude Code's documented form):
 * options first, then the name, then `--` and the server's command line. An option after the
 * name is a mistake the page once made (`-e` became part of the command line).
 */
function parseClaudeMcpAdd(words: string[]): Omit<Configured, 'where' | 'setup'> {
  expect(words.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
  const env: Record<string, string> = {};
  let i = 3;
  for (; words[i]?.startsWith('-'); i += 2) {
    const [option, value] = [words[i], words[i + 1] ?? ''];
    if (option === '-e' || option === '--env') {
      const [key, ...rest] = value.split('=');
      expect(rest.length, `${option} ${value} is KEY=VALUE`).toBeGreaterThan(0);
      env[key as string] = rest.join('=');
    } else expect(['-s', '--scope', '-t', '--transport']).toContain(option);
  }
  const name = words[i];
  expect(name).toBe('slivingdoc');
  expect(words[i + 1], 'options come before the server name, `--` right after it').toBe('--');
  const [command, ...args] = words.slice(i + 2);
  return { command: command as string, args, env };
}

function claudeCodeCommands(): Configured[] {
  const found: Configured[] = [];
  for (const block of fencedBlocks('sh')) {
    const setup: string[] = [];
    for (const line of block.text.replace(/\\\n\s*/g, ' ').split('\n')) {
      if (line.trim() === '') continue;
      if (line.startsWith('mkdir ')) setup.push(line);
      else
        found.push({
          where: `docs/hosts.md:${block.line} ${line.slice(0, 60)}`,
          setup: [...setup],
          ...parseClaudeMcpAdd(shellWords(line)),
        });
    }
  }
  return found;
}

function jsonConfigs(): Configured[] {
  const found: Configured[] = [];
  for (const block of fencedBlocks('json')) {
    const config = JSON.parse(block.text) as {
      mcpServers?: Record<
        string,
        { command: string; args: string[]; env?: Record<string, string> }
      >;
      servers?: Record<
        string,
        { type: string; command: string; args: string[]; env?: Record<string, string> }
      >;
    };
    const servers = config.mcpServers ?? config.servers;
    expect(servers, `docs/hosts.md:${block.line} names servers`).toBeDefined();
    if (config.servers) expect(config.servers.slivingdoc?.type).toBe('stdio');
    const server = servers?.slivingdoc;
    expect(server, `docs/hosts.md:${block.line} configures slivingdoc`).toBeDefined();
    // Every project-directory set-up on the page asks for `mkdir -p notes` first.
    const setup = server!.args.some((arg) => arg.includes('notes')) ? ['mkdir -p notes'] : [];
    found.push({
      where: `docs/hosts.md:${block.line}`,
      command: server!.command,
      args: server!.args,
      env: server!.env ?? {},
      setup,
    });
  }
  return found;
}

/** The S3 server the suite runs against, in place of the page's example bucket and account. */
function localS3(): Record<string, string> {
  const s3: ProvidedS3 = inject('s3');
  if ('error' in s3) throw new Error(`the real S3 server did not start:\n${s3.error}`);
  return {
    SLIVINGDOC_BUCKET: s3.env.SLIVINGDOC_TEST_S3_BUCKET,
    SLIVINGDOC_PREFIX: `hosts-doc/${randomUUID()}`,
    AWS_ENDPOINT_URL_S3: s3.env.SLIVINGDOC_TEST_S3_ENDPOINT,
    AWS_ACCESS_KEY_ID: s3.env.SLIVINGDOC_TEST_S3_ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: s3.env.SLIVINGDOC_TEST_S3_SECRET_KEY,
    AWS_REGION: 'us-east-1',
  };
}

/**
 * Starts a configured server in a fresh project directory: `npx -y slivingdoc` is the built
 * bin, `${workspaceFolder}` (VS Code, Cursor) and `$PWD` (the shell) the project; S3 settings point at the local S3 server (the
 * page's own values are examples). Runs the page's setup steps first.
 */
// biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's and Cursor's variable, not a template
const WORKSPACE_FOLDER = '${workspaceFolder}';

function startConfigured(configured: Configured, project: string): RawServer {
  expect(configured.command).toBe('npx');
  expect(configured.args.slice(0, 3)).toEqual(['-y', 'slivingdoc', 'serve']);
  const args = configured.args
    .slice(3)
    .map((arg) => arg.replaceAll(WORKSPACE_FOLDER, project).replaceAll('$PWD', project));
  for (const step of configured.setup) {
    expect(step).toBe('mkdir -p notes');
    mkdirSync(join(project, 'notes'), { recursive: true });
  }
  const s3 = args.includes('--bucket') || 'SLIVINGDOC_BUCKET' in configured.env;
  const env = { ...configured.env };
  if (s3) {
    delete env.AWS_PROFILE; // the page's example profile does not exist here
    const local = localS3();
    Object.assign(env, local);
    const bucket = args.indexOf('--bucket');
    if (bucket !== -1) args[bucket + 1] = local.SLIVINGDOC_BUCKET as string;
    const endpoint = args.indexOf('--endpoint');
    if (endpoint !== -1) args[endpoint + 1] = local.AWS_ENDPOINT_URL_S3 as string;
  }
  const server = new RawServer(args, sandboxEnv(env), { cwd: project });
  servers.push(server);
  return server;
}

async function handshake(server: RawServer) {
  const init = await server.initialize();
  expect(init.result, JSON.stringify(init)).toMatchObject({ serverInfo: { name: 'slivingdoc' } });
  const list = await server.request(2, 'tools/list');
  expect(list.result).toMatchObject({ tools: [{ name: 'notes_pull' }, { name: 'notes_commit' }] });
  const pull = await server.request(3, 'tools/call', { name: 'notes_pull', arguments: {} });
  expect(pull.result).toMatchObject({ structuredContent: { code: 'OK' } });
  server.child.stdin.end();
  expect(await server.exited).toEqual({ code: 0, signal: null });
}

describe('docs/hosts.md', () => {
  const project = () => mkdtempSync(join(tmpdir(), 'slivingdoc-test-project-'));

  it('names the snippets this test runs', () => {
    expect(claudeCodeCommands()).toHaveLength(3);
    expect(jsonConfigs()).toHaveLength(7);
  });

  it.each([...claudeCodeCommands(), ...jsonConfigs()].map((c) => [c.where, c] as const))(
    '%s starts and answers',
    async (_where, configured) => {
      await handshake(startConfigured(configured, project()));
    },
  );

  it('a missing workspace root is refused naming its path', async () => {
    const dir = project();
    const server = new RawServer(['--workspace-root', './notes'], sandboxEnv(), { cwd: dir });
    servers.push(server);
    expect((await server.exited).code).toBe(2);
    expect(server.stderrLines[0]).toBe(
      `slivingdoc: configuration — the workspace root ${join(dir, 'notes')} does not exist`,
    );
  });
});
