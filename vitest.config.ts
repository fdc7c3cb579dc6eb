import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One run over every project gives the single pass/fail total that .ci/run reports.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tooling'],
    // One test file per core at once. vitest's own default in a run is one fewer than the
    // cores, which on the 2-core development machine is a single worker: every file then ran
    // after the other, while the end-to-end files spend most of their time waiting on the
    // processes, sockets and fsyncs they drive (docs/development.md, "Where the test time
    // goes"). The suites pass with the other core busy, which is what a second worker adds.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
