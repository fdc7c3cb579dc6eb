/**
 * Nothing the first initialize does not need is loaded before it is answered.
 * The built bin's `serve` runs under the module log (helpers/module-log), which also marks
 * the moment its first stdout write (the initialize response) happens. Every module resolved
 * (or required: the log lists the CommonJS modules loaded before each write) before that mark
 * is classified: a bundle chunk by the sources its source map names, anything else by its
 * package. The engine, pino, momoa and the MCP dispatcher load only after the answer; the
 * control is that the same log sees them once the first pull has run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, sandboxEnv } from './helpers/bin';
import { moduleLogOfServe } from './helpers/module-log/serve';

beforeAll(assertBuilt);

const dist = join(import.meta.dirname, '../dist');

/** What a set of resolved module URLs amounts to. */
interface Loaded {
  /** Source files of the bundle (`packages/engine/src/service.ts`, `src/cli.ts`). */
  sources: string[];
  /** Third-party packages by name. */
  packages: string[];
  /** Built-in modules imported (`node:` or bare), without the prefix. */
  builtins: string[];
}

function sourcesOfChunk(url: string): string[] {
  const map = JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as {
    sources: string[];
  };
  // Sources are relative to dist/ (`../src/cli.ts`, `../../../packages/mcp/src/tools.ts`).
  return map.sources.map((source) => source.replace(/^(\.\.\/)+/, ''));
}

function loadedBy(urls: string[]): Loaded {
  const distUrl = pathToFileURL(dist).href;
  const sources = new Set<string>();
  const packages = new Set<string>();
  const builtins = new Set<string>();
  for (const url of urls) {
    if (url.startsWith('#')) continue;
    if (url.startsWith(`${distUrl}/`)) for (const s of sourcesOfChunk(url)) sources.add(s);
    else if (url.startsWith('node:')) builtins.add(url.slice('node:'.length));
    const name = /.*\/node_modules\/((?:@[^/]+\/)?[^/@][^/]*)\//.exec(url)?.[1];
    if (name !== undefined) packages.add(name);
  }
  return { sources: [...sources].sort(), packages: [...packages].sort(), builtins: [...builtins] };
}

/** The workspace packages (by directory name) a list of bundle sources comes from. */
const workspacePackages = (sources: string[]) => [
  ...new Set(sources.flatMap((s) => /^packages\/([^/]+)\//.exec(s)?.[1] ?? [])),
];

describe('an embedded serve loads only what its initialize answer needs before answering it', () => {
  it('resolves no engine, pino or MCP dispatcher module before the initialize response', async () => {
    const env = sandboxEnv();
    const lines = await moduleLogOfServe(env);
    const mark = lines.findIndex((line) => line.startsWith('# stdout'));
    expect(mark).toBeGreaterThan(0);
    const before = loadedBy(lines.slice(0, mark));
    const after = loadedBy(lines.slice(mark + 1));
    expect(before.sources).toContain('src/cli.ts');

    // Before the answer: the command line, the configuration (policy validates the path
    // sets the instructions name; `--actor` is checked by the actor rules alone), the store
    // and its probe, the stdio transport. No engine module, and of merge only the author rule.
    expect(workspacePackages(before.sources).sort()).toEqual([
      'envelope',
      'mcp',
      'merge',
      'policy',
      'store',
    ]);
    expect(
      before.sources.filter((s) => s.startsWith('packages/engine/') && !s.endsWith('/actor.ts')),
    ).toEqual([]);
    expect(before.sources.filter((s) => s.startsWith('packages/merge/'))).toEqual([
      'packages/merge/src/errors.ts',
      'packages/merge/src/model/commit-codec.ts',
      'packages/merge/src/model/object-format.ts',
    ]);
    expect(before.sources.filter((s) => s.startsWith('packages/mcp/'))).not.toContain(
      'packages/mcp/src/server.ts',
    );
    expect(before.sources).not.toContain('src/runtime/mcp-session.ts');
    expect(before.sources).not.toContain('src/logging.ts');
    // The path sets are normalised with Unicode case folding before serving. No other
    // third-party package: momoa (the duplicate-key check) waits for the first tools/call.
    expect(before.packages).toEqual(['unicode-case-folding']);
    // Neither pino's worker-thread transports nor the engine's zlib and sockets.
    for (const builtin of ['worker_threads', 'zlib', 'net'])
      expect(before.builtins).not.toContain(builtin);

    // Control: the same log sees the engine, pino and the dispatcher once the pull ran.
    expect(workspacePackages(after.sources)).toEqual(
      expect.arrayContaining(['engine', 'merge', 'workspace']),
    );
    expect(after.sources).toContain('packages/mcp/src/server.ts');
    expect(after.packages).toContain('pino');
    expect(after.packages).toContain('@humanwhocodes/momoa');
  });
});
