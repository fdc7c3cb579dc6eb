// Bundles bench/store-bench.ts (TypeScript) with tsup and runs it with plain node. The bundle
// goes under node_modules/ so its @aws-sdk imports resolve from this package.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'tsup';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const outDir = join(packageDir, 'node_modules', '.bench');
await build({
  entry: { 'store-bench': join(packageDir, 'bench/store-bench.ts') },
  outDir,
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  silent: true,
  config: false,
  dts: false,
  sourcemap: false,
});
await import(pathToFileURL(join(outDir, 'store-bench.js')).href);
