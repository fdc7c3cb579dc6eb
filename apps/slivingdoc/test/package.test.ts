import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import server from '../server.json' with { type: 'json' };
import { assertBuilt } from './helpers/bin';
import { staticExternalImports } from './helpers/chunks';

const repo = join(import.meta.dirname, '../../..');
type Manifest = { name: string; dependencies?: Record<string, string> };
const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(repo, 'packages', dir, 'package.json'), 'utf8')) as Manifest;

/** Third-party runtime dependencies of every bundled library, through workspace dependencies. */
function bundledThirdParty(): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (name: string, seen: Set<string>) => {
    if (seen.has(name)) return;
    seen.add(name);
    const manifest = readManifest(name.replace('@slivingdoc/', ''));
    for (const [dep, version] of Object.entries(manifest.dependencies ?? {})) {
      if (dep.startsWith('@slivingdoc/')) visit(dep, seen);
      else found.set(dep, version);
    }
  };
  const seen = new Set<string>();
  for (const dep of Object.keys(pkg.devDependencies)) {
    if (dep.startsWith('@slivingdoc/')) visit(dep, seen);
  }
  return found;
}

describe('the published package', () => {
  it('depends on every third-party package the bundled libraries need, at the same version', () => {
    const dependencies: Record<string, string> = pkg.dependencies;
    for (const [dep, version] of bundledThirdParty()) {
      expect({ dep, version: dependencies[dep] }).toEqual({ dep, version });
    }
    expect(Object.keys(dependencies).filter((d) => d.startsWith('@slivingdoc/'))).toEqual([]);
  });

  it('server.json names this package and its release version', () => {
    expect(server.name).toBe(pkg.mcpName);
    expect(server.version).toBe(pkg.version);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(server.packages).toEqual([
      expect.objectContaining({
        registryType: 'npm',
        identifier: pkg.name,
        version: pkg.version,
        transport: { type: 'stdio' },
        packageArguments: [{ type: 'positional', value: 'serve' }],
      }),
    ]);
    expect(pkg.files).toContain('server.json');
  });
});

describe('the build', () => {
  beforeAll(assertBuilt);

  it('the bin entry loads only Node built-ins before running (version and help stay fast)', () => {
    const dist = join(import.meta.dirname, '../dist');
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    expect(staticExternalImports(dist, 'cli.js').filter((m) => !builtins.has(m))).toEqual([]);
  });
});
