import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkLayers } from '../check-layers.mjs';
import { repoRoot } from '../vitest-shared.ts';

type Violation = { file: string; specifier: string; problem: string };

const fixtures: string[] = [];
afterEach(() => {
  for (const dir of fixtures.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fixtureRepo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  fixtures.push(root);
  cpSync(join(repoRoot, 'tooling/layers.json'), join(root, 'tooling/layers.json'), {
    recursive: true,
  });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ devDependencies: { vitest: '1' } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const pkg = (name: string, deps: Record<string, string> = {}) =>
  JSON.stringify({ name: `@slivingdoc/${name}`, dependencies: deps });

describe('layer check', () => {
  it('passes on the repository itself', () => {
    expect(checkLayers(repoRoot) as Violation[]).toEqual([]);
  });

  it('rejects a lower layer importing a higher one', () => {
    const root = fixtureRepo({
      'packages/store/package.json': pkg('store', { '@slivingdoc/engine': 'workspace:*' }),
      'packages/store/src/index.ts':
        "import { pull } from '@slivingdoc/engine';\nexport { pull };\n",
    });
    const violations = checkLayers(root) as Violation[];
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({
      file: 'packages/store/src/index.ts',
      specifier: '@slivingdoc/engine',
      problem: "layer 'store' may not import 'engine'",
    });
  });

  it('rejects an undeclared dependency, including dynamic imports', () => {
    const root = fixtureRepo({
      'packages/merge/package.json': pkg('merge'),
      // Built by concatenation so the layer check of this very file does not see the import.
      'packages/merge/src/index.ts': `export const x = () => import('${'left'}-pad');\n`,
    });
    expect((checkLayers(root) as Violation[]).map((v) => v.problem)).toEqual([
      "'left-pad' is not declared in packages/merge/package.json",
    ]);
  });

  it('accepts builtins, relative imports, declared and allowed ones', () => {
    const root = fixtureRepo({
      'packages/policy/package.json': pkg('policy', { '@slivingdoc/envelope': 'workspace:*' }),
      'packages/policy/src/index.ts': [
        "import { join } from 'node:path';",
        "import fs from 'fs';",
        "import type { Code } from '@slivingdoc/envelope';",
        "export * from './rules';",
        'export const a = join, b = fs;',
        'export type C = Code;',
      ].join('\n'),
      'packages/policy/test/a.test.ts': "import { it } from 'vitest';\nit('x', () => {});\n",
    });
    expect(checkLayers(root)).toEqual([]);
  });
});
