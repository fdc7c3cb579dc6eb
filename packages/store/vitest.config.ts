import { defineProject } from 'vitest/config';
import {
  loadedMachineTimeouts,
  rgwGlobalSetup,
  sourceAliases,
} from '../../tooling/vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: 'store',
    include: ['test/**/*.test.ts'],
    ...loadedMachineTimeouts,
    // Starts a private Ceph RADOS Gateway unless SLIVINGDOC_TEST_S3_* names one already.
    globalSetup: [rgwGlobalSetup],
  },
});
