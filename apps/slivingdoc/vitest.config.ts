import { defineProject } from 'vitest/config';
import {
  loadedMachineTimeouts,
  rgwGlobalSetup,
  sourceAliases,
} from '../../tooling/vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: 'slivingdoc',
    include: ['test/**/*.test.ts'],
    ...loadedMachineTimeouts,
    // Starts a private Ceph RADOS Gateway unless SLIVINGDOC_TEST_S3_* names one already
    // (test/exchange.test.ts runs servers against the real S3 server).
    globalSetup: [rgwGlobalSetup],
    // Each file's HOME sandboxes (test/helpers/bin.ts) are removed when it ends.
    setupFiles: ['test/setup/remove-sandboxes.ts'],
  },
});
