import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, derived from this file's location. */
export const repoRoot = dirname(dirname(fileURLToPath(import.meta.url)));

/** One alias: an exact import specifier and the source file it stands for. */
export interface SourceAlias {
  find: RegExp;
  replacement: string;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * Maps every entry point of every `@slivingdoc/<name>` workspace package (`@slivingdoc/mcp`,
 * `@slivingdoc/mcp/stdio`, …) to its source file, the `@slivingdoc/source` condition of its
 * `exports` entry, so tests run against sources without building the lower layers first.
 * Exact matches: a package's alias must not swallow its subpaths.
 */
export const sourceAliases: SourceAlias[] = readdirSync(join(repoRoot, 'packages'))
  .map((dir) => join(repoRoot, 'packages', dir))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .flatMap((dir) => {
    const { name, exports } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      exports: Record<string, { '@slivingdoc/source'?: string }>;
    };
    return Object.entries(exports).flatMap(([subpath, conditions]) => {
      const source = conditions['@slivingdoc/source'];
      if (source === undefined) return [];
      const specifier = subpath === '.' ? name : `${name}${subpath.slice(1)}`;
      return [{ find: new RegExp(`^${escapeRegExp(specifier)}$`), replacement: join(dir, source) }];
    });
  });

/**
 * The vitest global setup that provides the real S3 server (`inject('s3')`), resolved through
 * this package's declared `@slivingdoc/testkit` dependency rather than a path into it.
 */
export const rgwGlobalSetup: string = createRequire(import.meta.url).resolve(
  '@slivingdoc/testkit/rgw-global-setup',
);

/**
 * Per-test and per-hook time limits of every project. The suites run real processes, git and
 * property checks on a shared 2-core machine that may be fully loaded beside them (vitest's
 * 5 s default was tight there); no verdict depends on them: a test that hangs still fails,
 * after a minute. Tests that are longer by design set their own, larger limit.
 */
export const loadedMachineTimeouts = { testTimeout: 60_000, hookTimeout: 120_000 } as const;
