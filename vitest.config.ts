import { defineConfig } from 'vitest/config';

// One run over every project gives the single pass/fail total that .ci/run reports.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tooling'],
  },
});
