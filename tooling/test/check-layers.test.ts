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

  it('rejects a relative import that leaves its package, in tests and benches too', () => {
    const root = fixtureRepo({
      'packages/engine/package.json': pkg('engine'),
      'packages/engine/src/index.ts': "export { x } from '../../store/src/x';\n",
      'packages/engine/test/a.test.ts': "import { y } from '../../../tooling/x';\nexport { y };\n",
      'packages/engine/bench/b.ts': "export * from '../../../tooling/bench/table';\n",
    });
    expect(checkLayers(root) as Violation[]).toEqual([
      {
        file: 'packages/engine/bench/b.ts',
        specifier: '../../../tooling/bench/table',
        problem:
          'relative import leaves its package (reaches tooling/bench/table): import the package that owns it by name',
      },
      {
        file: 'packages/engine/src/index.ts',
        specifier: '../../store/src/x',
        problem:
          'relative import leaves its package (reaches packages/store/src/x): import the package that owns it by name',
      },
      {
        file: 'packages/engine/test/a.test.ts',
        specifier: '../../../tooling/x',
        problem:
          'relative import leaves its package (reaches tooling/x): import the package that owns it by name',
      },
    ]);
  });

  it('accepts relative imports inside the package and only the exact build-config exemption', () => {
    const root = fixtureRepo({
      'packages/store/package.json': pkg('store'),
      'packages/store/src/index.ts': "export * from './keys';\n",
      'packages/store/test/fixtures/child.ts': "export * from '../../src/index';\n",
      'packages/store/vitest.config.ts': "export * from '../../tooling/vitest-shared.ts';\n",
      'packages/store/tsup.config.ts': "export { default } from '../../tooling/tsup-library.ts';\n",
      // The exemption names one file for one config, not tooling/ as a whole.
      'packages/store/test/config.ts': "export * from '../../../tooling/vitest-shared.ts';\n",
      'packages/store/src/vitest.config.ts': "export * from '../../../tooling/vitest-shared.ts';\n",
    });
    expect((checkLayers(root) as Violation[]).map((v) => v.file)).toEqual([
      'packages/store/src/vitest.config.ts',
      'packages/store/test/config.ts',
    ]);
  });

  it('lets tests, benches and tooling use the test kit, never product src', () => {
    const testkit = { '@slivingdoc/testkit': 'workspace:*' };
    const root = fixtureRepo({
      'packages/merge/package.json': pkg('merge', testkit),
      'packages/merge/src/index.ts':
        "export { seededRandom } from '@slivingdoc/testkit/seeded-random';\n",
      'packages/merge/test/a.test.ts':
        "import { seededRandom } from '@slivingdoc/testkit/seeded-random';\nseededRandom(1);\n",
      'packages/merge/bench/run.ts':
        "import { renderColumns } from '@slivingdoc/testkit/table';\nrenderColumns([], []);\n",
      'tooling/package.json': JSON.stringify({
        name: '@slivingdoc/tooling',
        devDependencies: testkit,
      }),
      'tooling/bench/run.ts':
        "import { renderColumns } from '@slivingdoc/testkit/table';\nrenderColumns([], []);\n",
    });
    expect(checkLayers(root) as Violation[]).toEqual([
      {
        file: 'packages/merge/src/index.ts',
        specifier: '@slivingdoc/testkit/seeded-random',
        problem: "product code may not import the test kit '@slivingdoc/testkit'",
      },
    ]);
  });

  it('still requires the test kit to be declared', () => {
    const root = fixtureRepo({
      'packages/store/package.json': pkg('store'),
      'packages/store/test/a.test.ts':
        "import { refuseWrites } from '@slivingdoc/testkit/refuse-writes';\nrefuseWrites;\n",
    });
    expect((checkLayers(root) as Violation[]).map((v) => v.problem)).toEqual([
      "'@slivingdoc/testkit' is not declared in packages/store/package.json",
    ]);
  });

  it('rejects an import cycle inside a package, type-only and through re-exports too', () => {
    const root = fixtureRepo({
      'packages/merge/package.json': pkg('merge'),
      // A value import one way, a type-only import back.
      'packages/merge/src/a.ts': "import { b } from './b';\nexport const a = b;\n",
      'packages/merge/src/b.ts': "import type { A } from './a.ts';\nexport const b = 1 as A;\n",
      // Three files around: a re-export, a `.js` specifier and a directory index close it.
      'packages/merge/src/c.ts': "export { d } from './d.js';\n",
      'packages/merge/src/d.ts': "export * from './e';\nexport const d = 1;\n",
      'packages/merge/src/e/index.ts': "export type { C } from '../c';\n",
      // A file that imports itself.
      'packages/merge/src/f.ts': "import type { F } from './f';\nexport type G = F;\n",
      // Imports that form a chain, not a loop, are fine.
      'packages/merge/src/g.ts': "import { a } from './a';\nimport { d } from './d';\n",
    });
    expect(checkLayers(root) as Violation[]).toEqual([
      {
        file: 'packages/merge/src/a.ts',
        specifier: './b',
        problem:
          'import cycle: packages/merge/src/a.ts → packages/merge/src/b.ts → packages/merge/src/a.ts',
      },
      {
        file: 'packages/merge/src/c.ts',
        specifier: './d.js',
        problem:
          'import cycle: packages/merge/src/c.ts → packages/merge/src/d.ts → packages/merge/src/e/index.ts → packages/merge/src/c.ts',
      },
      {
        file: 'packages/merge/src/f.ts',
        specifier: './f',
        problem: 'import cycle: packages/merge/src/f.ts → packages/merge/src/f.ts',
      },
    ]);
  });

  it('rejects an import cycle in an app and in its tests', () => {
    const root = fixtureRepo({
      'apps/slivingdoc/package.json': pkg('slivingdoc'),
      'apps/slivingdoc/src/config/command-line.ts': "import { usage } from './refusal';\nusage;\n",
      'apps/slivingdoc/src/config/refusal.ts':
        "import type { Refusal } from './types';\nexport const usage = {} as Refusal;\n",
      'apps/slivingdoc/src/config/types.ts':
        "import type { Line } from './command-line';\nexport type Refusal = Line;\n",
      'apps/slivingdoc/test/a.ts': "import { b } from './b';\nexport const a = b;\n",
      'apps/slivingdoc/test/b.ts': "import { a } from './a';\nexport const b = a;\n",
    });
    expect((checkLayers(root) as Violation[]).map((v) => v.problem)).toEqual([
      'import cycle: apps/slivingdoc/src/config/command-line.ts → apps/slivingdoc/src/config/refusal.ts → apps/slivingdoc/src/config/types.ts → apps/slivingdoc/src/config/command-line.ts',
      'import cycle: apps/slivingdoc/test/a.ts → apps/slivingdoc/test/b.ts → apps/slivingdoc/test/a.ts',
    ]);
  });
});
