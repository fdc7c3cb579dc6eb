import { defineProject } from 'vitest/config';
import { rgwGlobalSetup, sourceAliases } from '../../tooling/vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: 'store',
    include: ['test/**/*.test.ts'],
    // Starts a private Ceph RADOS Gateway unless SLIVINGDOC_TEST_S3_* names one already.
    globalSetup: [rgwGlobalSetup],
    // The real-server suites are network round trips on a shared 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
