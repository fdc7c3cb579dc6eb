import { defineConfig } from 'tsup';

// The workspace packages are bundled into the app, so the published tarball needs only
// the third-party dependencies listed in package.json (docs/distribution.md).
export default defineConfig({
  entry: ['src/cli.ts'],
  format: ['esm'],
  dts: false,
  clean: true,
  sourcemap: true,
  target: 'node20',
  noExternal: [/^@slivingdoc\//],
  esbuildOptions(options) {
    options.conditions = ['@slivingdoc/source'];
  },
  banner: { js: '#!/usr/bin/env node' },
});
