import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, derived from this file's location. */
export const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Maps every `@slivingdoc/<name>` workspace package to its `src/index.ts`, so tests run
 * against sources without building the lower layers first.
 */
export const sourceAliases: Record<string, string> = Object.fromEntries(
  readdirSync(join(repoRoot, 'packages'))
    .map((dir) => join(repoRoot, 'packages', dir))
    .filter((dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src/index.ts')))
    .map((dir) => {
      const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
      };
      return [name, join(dir, 'src/index.ts')];
    }),
);
