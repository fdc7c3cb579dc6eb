import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { until } from '@slivingdoc/testkit/until';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, sandboxEnv } from './helpers/bin';
import { HubProcess, withConfigHome } from './helpers/http-hub';

// Every snippet of docs/hosts.md's "One server for many agents" section, as a user would use
// it: the console lines run with the built bin, the host configurations and the client
// libraries' code connect to a real hub with their own URL and headers (the placeholder token
// replaced by a real one, port 7077 by the hub's free port).

const page = readFileSync(join(import.meta.dirname, '../../../docs/hosts.md'), 'utf8');
const start = page.indexOf('## One server for many agents');
const section = page.slice(start, page.indexOf('\n## ', start + 1));
const PLACEHOLDER = 'sld_REPLACE_WITH_YOUR_TOKEN';
const appDir = join(import.meta.dirname, '..');

function blocks(lang: string): string[] {
  const pattern = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm');
  return [...section.matchAll(pattern)].map((match) => match[1] ?? '');
}

/** POSIX-shell words of one command line: plain words and double quotes (all the page uses). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
}

let hub: HubProcess;
let token = '';
let env: NodeJS.ProcessEnv;
const real = (text: string) =>
  text.replaceAll(PLACEHOLDER, token).replaceAll('127.0.0.1:7077', `127.0.0.1:${hub.port}`);

beforeAll(async () => {
  assertBuilt();
  env = withConfigHome(sandboxEnv());
  const [setup] = blocks('console');
  const [add, serve] = setup!.trim().split('\n').map(shellWords);
  expect(add).toEqual(['slivingdoc', 'token', 'add', 'alice']);
  const added = spawnSync(process.execPath, [bin, ...add!.slice(1)], { env, encoding: 'utf8' });
  expect(added.status).toBe(0);
  token = added.stdout.trim();
  expect(serve).toEqual(['slivingdoc', 'serve', '--listen', '127.0.0.1:7077']);
  // The page's port may be taken on a test machine: the same command on a free port.
  hub = await HubProcess.start([], env);
});
afterAll(async () => {
  await hub?.stop();
});

/** initialize, tools/list and a pull through `client`, connected already. */
async function exercise(client: Client): Promise<void> {
  expect(client.getServerVersion()?.name).toBe('slivingdoc');
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(['notes_pull', 'notes_commit']);
  const pull = await client.callTool({ name: 'notes_pull', arguments: {} });
  expect(pull.structuredContent).toMatchObject({ code: 'OK' });
  await client.close();
}

async function connectHttp(url: string, headers: Record<string, string>): Promise<void> {
  const client = new Client({ name: 'hosts-doc', version: '0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  await exercise(client);
}

describe('docs/hosts.md, Streamable HTTP', () => {
  it('names the snippets this test runs', () => {
    expect(blocks('console')).toHaveLength(2);
    expect(blocks('jsonc')).toHaveLength(3);
    expect(blocks('js')).toHaveLength(2);
  });

  it('the hub prints its URL, the claude mcp add line and the view address on stdout', async () => {
    expect(hub.url).toBe(`http://127.0.0.1:${hub.port}/mcp`);
    await until(() => hub.stdout.includes('tokens:'), 'the whole banner on stdout');
    expect(hub.stdout).toContain(
      `claude mcp add --transport http slivingdoc ${hub.url} --header "Authorization: Bearer <token>"`,
    );
    expect(hub.stdout).toContain(`http://127.0.0.1:${hub.port}/?token=<token>`);
  });

  it('Claude Code: claude mcp add --transport http NAME URL --header "K: V"', async () => {
    const words = shellWords(real(blocks('console')[1]!.trim()));
    expect(words.slice(0, 6)).toEqual([
      'claude',
      'mcp',
      'add',
      '--transport',
      'http',
      'slivingdoc',
    ]);
    const [url, headerFlag, header] = words.slice(6);
    expect(headerFlag).toBe('--header');
    const [name, ...value] = header!.split(': ');
    await connectHttp(url!, { [name!]: value.join(': ') });
  });

  it('Cursor and VS Code: url and headers (VS Code: type http)', async () => {
    const [cursor, vscode] = blocks('jsonc').map(
      (text) => JSON.parse(real(text)) as Record<string, Record<string, Record<string, unknown>>>,
    );
    const cursorServer = cursor!.mcpServers!.slivingdoc!;
    await connectHttp(cursorServer.url as string, cursorServer.headers as Record<string, string>);
    const vscodeServer = vscode!.servers!.slivingdoc!;
    expect(vscodeServer.type).toBe('http');
    await connectHttp(vscodeServer.url as string, vscodeServer.headers as Record<string, string>);
  });

  it.each([
    ['Vercel AI SDK', 0, 'console.log(JSON.stringify(Object.keys(tools)));'],
    ['LangChain', 1, 'console.log(JSON.stringify(tools.map((tool) => tool.name)));'],
  ])('%s: the snippet runs and lists both tools', (_name, index, report) => {
    // Written beside the app's node_modules, so the snippet's imports resolve as in a project.
    const dir = mkdtempSync(join(appDir, 'node_modules', '.hosts-doc-'));
    try {
      const file = join(dir, 'snippet.mjs');
      writeFileSync(file, `${real(blocks('js')[index]!)}\n${report}\nawait client.close();\n`);
      const run = spawnSync(process.execPath, [file], { env, encoding: 'utf8', timeout: 60_000 });
      expect(run.status, run.stderr).toBe(0);
      const names = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as string[];
      expect(names.sort()).toEqual(['notes_commit', 'notes_pull']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stdio-only hosts: mcp-remote bridges to the hub', async () => {
    const config = JSON.parse(real(blocks('jsonc')[2]!)) as {
      mcpServers: { slivingdoc: { command: string; args: string[]; env: Record<string, string> } };
    };
    const server = config.mcpServers.slivingdoc;
    expect(server.command).toBe('npx');
    expect(server.args.slice(0, 2)).toEqual(['-y', 'mcp-remote']);
    const client = new Client({ name: 'stdio-host', version: '0' });
    await client.connect(
      new StdioClientTransport({
        // `npx -y mcp-remote` is the package installed for the app's tests.
        command: join(appDir, 'node_modules', '.bin', 'mcp-remote'),
        args: server.args.slice(2),
        env: { ...(env as Record<string, string>), ...server.env },
        stderr: 'ignore',
      }),
    );
    await exercise(client);
  });
});

// README's "Many agents on one host": the same commands, the Claude Code line and the view's
// login address, run against the hub the page's commands started.
const readme = readFileSync(join(import.meta.dirname, '../../../README.md'), 'utf8');
const readmeStart = readme.indexOf('## Many agents on one host');
const readmeSection = readme.slice(readmeStart, readme.indexOf('\n## ', readmeStart + 1));

describe("README, 'Many agents on one host'", () => {
  const consoles = [...readmeSection.matchAll(/^```console\n([\s\S]*?)^```/gm)].map(
    (match) => match[1] ?? '',
  );

  it('comes after the two set-up commands and runs the same commands as docs/hosts.md', () => {
    expect(readmeStart).toBeGreaterThan(readme.indexOf('npm test --silent'));
    expect(consoles).toHaveLength(2);
    expect(consoles[0]).toBe(blocks('console')[0]);
    expect(consoles[1]).toBe(blocks('console')[1]);
  });

  it('the Claude Code line connects, and the view logs in at the address the page gives', async () => {
    const words = shellWords(real(consoles[1]!.trim()));
    const [name, ...value] = words[8]!.split(': ');
    await connectHttp(words[6]!, { [name!]: value.join(': ') });
    const address = /`(http:\/\/127\.0\.0\.1:7077\/\?token=[^`]+)`/.exec(readmeSection)?.[1];
    expect(address).toBeDefined();
    const page = await fetch(real(address!), { redirect: 'manual' });
    expect(page.status, await page.text()).toBeLessThan(400);
    expect(page.headers.get('set-cookie')).toMatch(/./);
  });
});

// docs/hosts.md's "Keeping the hub running": the systemd unit's and the launchd agent's
// command is the hub's, and it starts (port 7077 replaced by a free one, the home by a sandbox).
describe("docs/hosts.md, 'Keeping the hub running'", () => {
  const keepStart = page.indexOf('## Keeping the hub running');
  const keep = page.slice(keepStart, page.indexOf('\n## ', keepStart + 1));
  const fenced = (lang: string) =>
    new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'm').exec(keep)?.[1] ?? '';

  it('the systemd unit and the launchd agent run the same hub command, and it starts', async () => {
    const unit = fenced('ini');
    const execStart = /^ExecStart=(.+)$/m.exec(unit)?.[1];
    expect(unit).toMatch(/^Restart=on-failure$/m);
    const words = shellWords(execStart!);
    expect(words.slice(0, 4)).toEqual(['/usr/bin/env', 'npx', '-y', 'slivingdoc']);
    const hubArgs = words.slice(4);
    expect(hubArgs).toEqual([
      'serve',
      '--listen',
      '127.0.0.1:7077',
      '--workspace-root',
      '%h/notebooks',
    ]);
    const plist = fenced('xml');
    expect(plist).toContain('<key>KeepAlive</key><true/>');
    const line = /exec npx -y slivingdoc ([^<]+)<\/string>/.exec(plist)?.[1];
    expect(shellWords(line!)).toEqual([...hubArgs.slice(0, 4), '$HOME/notebooks']);

    const home = mkdtempSync(join(env.HOME!, 'unit-home-'));
    const root = join(home, 'notebooks');
    mkdirSync(root);
    const kept = await HubProcess.start([hubArgs[3]!, root], env);
    try {
      expect(kept.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    } finally {
      await kept.stop();
    }
  });
});
