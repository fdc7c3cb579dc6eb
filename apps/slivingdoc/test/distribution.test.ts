import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { assertBuilt, sandboxEnv } from './helpers/bin';

beforeAll(assertBuilt);
const appDir = join(import.meta.dirname, '..');

describe('the packed tarball (docs/distribution.md)', () => {
  it('installs with npm alone and runs version and serve through npx', async () => {
    const work = mkdtempSync(join(tmpdir(), 'slivingdoc-dist-'));
    execFileSync('pnpm', ['pack', '--pack-destination', work], { cwd: appDir, stdio: 'pipe' });
    const tarball = readdirSync(work).find((file) => file.endsWith('.tgz'));
    expect(tarball).toBe(`slivingdoc-${pkg.version}.tgz`);
    writeFileSync(join(work, 'package.json'), '{"name":"dist-check","private":true}\n');
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', `./${tarball}`],
      { cwd: work, stdio: 'pipe', timeout: 600_000 },
    );
    // The libraries are bundled: nothing of the workspace is installed.
    expect(existsSync(join(work, 'node_modules/@slivingdoc'))).toBe(false);

    const env = sandboxEnv({ npm_config_update_notifier: 'false' });
    const version = execFileSync('npx', ['--no-install', 'slivingdoc', 'version'], {
      cwd: work,
      env,
      encoding: 'utf8',
    });
    expect(version).toBe(`slivingdoc ${pkg.version}\n`);

    const client = new Client({ name: 'dist-check', version: '0' });
    await client.connect(
      new StdioClientTransport({
        command: 'npx',
        args: ['--no-install', 'slivingdoc', 'serve'],
        cwd: work,
        env: env as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      expect(client.getServerVersion()).toEqual({ name: 'slivingdoc', version: pkg.version });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['notes_pull', 'notes_commit']);
      const pull = await client.callTool({ name: 'notes_pull', arguments: {} });
      expect(pull.structuredContent).toMatchObject({ code: 'OK', generation: 0 });
    } finally {
      await client.close();
    }
  }, 600_000);
});
