import { defineProject } from 'vitest/config';
import { loadedMachineTimeouts, rgwGlobalSetup, sourceAliases } from './vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: 'tooling',
    include: ['test/**/*.test.ts'],
    ...loadedMachineTimeouts,
    // The reliability suites need the real S3 server: reuse the one test-all.sh started
    // (SLIVINGDOC_TEST_S3_* set) or start a private one (the store package's setup).
    globalSetup: [rgwGlobalSetup],
  },
});
