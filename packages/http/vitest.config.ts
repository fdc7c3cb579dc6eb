import { defineProject } from 'vitest/config';
import { loadedMachineTimeouts, sourceAliases } from '../../tooling/vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: { name: 'http', include: ['test/**/*.test.ts'], ...loadedMachineTimeouts },
});
