import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

/**
 * The vitest global setup that provides the real S3 server (`inject('s3')`), resolved through
 * this package's declared `@slivingdoc/testkit` dependency rather than a path into it.
 */
export const rgwGlobalSetup: string = createRequire(import.meta.url).resolve(
  '@slivingdoc/testkit/rgw-global-setup',
);
