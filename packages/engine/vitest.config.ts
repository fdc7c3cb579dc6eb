import { defineProject } from 'vitest/config';
import { rgwGlobalSetup, sourceAliases } from '../../tooling/vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: 'engine',
    include: ['test/**/*.test.ts'],
    // Starts a private Ceph RADOS Gateway unless SLIVINGDOC_TEST_S3_* names one already; the
    // real-S3 suite fails loudly (never skips) when it could not start.
    globalSetup: [rgwGlobalSetup],
    // Real processes and a real server on a shared 2-core machine; nothing asserts timing.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
