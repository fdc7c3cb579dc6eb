import { defineProject } from 'vitest/config';
import { sourceAliases } from '../../tooling/vitest-shared.ts';

export default defineProject({
  resolve: { alias: sourceAliases },
  test: { name: 'view', include: ['test/**/*.test.ts'] },
});
