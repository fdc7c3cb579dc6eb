import { defineConfig } from 'tsup';

/** The build of every `@slivingdoc/*` library: ESM plus declarations from `src/index.ts`. */
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
});
