import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

/**
 * The source file of every entry point the package exports: the `@slivingdoc/source`
 * condition of each `exports` entry (`./src/index.ts`, `./src/stdio.ts`, …), so adding a
 * subpath to package.json is all it takes to build it.
 */
function exportedSources(): string[] {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
    exports: Record<string, { '@slivingdoc/source': string }>;
  };
  return Object.values(manifest.exports).map((entry) => entry['@slivingdoc/source']);
}

/** The build of every `@slivingdoc/*` library: ESM plus declarations for each export. */
export default defineConfig({
  entry: exportedSources(),
  format: ['esm'],
  // Declarations resolve other workspace packages through their built declarations (turbo
  // builds dependencies first), not their sources: each package's declaration build then
  // checks its own sources only, instead of every package it imports again.
  dts: { compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
