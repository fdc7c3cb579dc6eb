import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// `pnpm version-packages` = `changeset version` + tooling/sync-server-json.mjs: the MCP
// registry entry (apps/slivingdoc/server.json) follows the app's version.

const repo = join(import.meta.dirname, '../..');
const changeset = join(repo, 'node_modules/@changesets/cli/bin.js');
const sync = join(repo, 'tooling/sync-server-json.mjs');

describe('the version step', () => {
  it('is changeset version followed by the server.json sync', () => {
    const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
    expect(root.scripts['version-packages']).toBe(
      'changeset version && node tooling/sync-server-json.mjs',
    );
  });

  it('a real changeset version bumps the app, then server.json follows, byte for byte otherwise', () => {
    const work = mkdtempSync(join(tmpdir(), 'slivingdoc-version-'));
    const app = join(work, 'apps/slivingdoc');
    mkdirSync(app, { recursive: true });
    mkdirSync(join(work, '.changeset'));
    cpSync(join(repo, 'apps/slivingdoc/package.json'), join(app, 'package.json'));
    const original = readFileSync(join(repo, 'apps/slivingdoc/server.json'), 'utf8');
    writeFileSync(join(app, 'server.json'), original);
    const config = JSON.parse(readFileSync(join(repo, '.changeset/config.json'), 'utf8'));
    config.fixed = [['slivingdoc']]; // the libraries are not part of this copy
    writeFileSync(join(work, '.changeset/config.json'), JSON.stringify(config));
    writeFileSync(
      join(work, '.changeset/a-change.md'),
      '---\n"slivingdoc": minor\n---\n\nA change.\n',
    );
    writeFileSync(
      join(work, 'package.json'),
      '{"name":"r","private":true,"workspaces":["apps/*"]}',
    );
    const git = (...args: string[]) => execFileSync('git', args, { cwd: work, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');

    execFileSync(process.execPath, [changeset, 'version'], { cwd: work, stdio: 'pipe' });
    const { version } = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    const before = JSON.parse(original).version as string;
    expect(version).not.toBe(before);
    execFileSync(process.execPath, [sync, app], { cwd: work, stdio: 'pipe' });

    const text = readFileSync(join(app, 'server.json'), 'utf8');
    const server = JSON.parse(text);
    expect(server.version).toBe(version);
    expect(server.packages[0].version).toBe(version);
    expect(text).toBe(original.replaceAll(`"version": "${before}"`, `"version": "${version}"`));
  }, 120_000);
});
