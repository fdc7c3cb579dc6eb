import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

// `@slivingdoc/engine` as another Node tool uses it: every library packed with `pnpm pack`
// (what publishing uploads), installed with npm into a directory outside the monorepo, and
// the README's example compiled with strict tsc against the packed declarations and run.

const repo = join(import.meta.dirname, '../../..');
const LIBRARIES = ['engine', 'envelope', 'merge', 'policy', 'store', 'workspace', 'mcp'];
const readme = readFileSync(join(repo, 'packages/engine/README.md'), 'utf8');
const tsc = join(repo, 'node_modules/typescript/bin/tsc');

interface Packed {
  name: string;
  tarball: string;
  manifest: Record<string, unknown> & {
    exports: Record<string, Record<string, string>>;
    dependencies?: Record<string, string>;
  };
  files: string[];
}

const packed: Packed[] = [];
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'slivingdoc-consumer-'));
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  for (const library of LIBRARIES) {
    const dir = join(repo, 'packages', library);
    const before = new Set(readdirSync(tarballs));
    execFileSync('pnpm', ['pack', '--pack-destination', tarballs], { cwd: dir, stdio: 'pipe' });
    const tarball = join(tarballs, readdirSync(tarballs).find((file) => !before.has(file))!);
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((file) => file.replace(/^package\//, './'));
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
    ) as Packed['manifest'];
    packed.push({ name: `@slivingdoc/${library}`, tarball, manifest, files });
  }
}, 300_000);

describe('the packed libraries', () => {
  it('name only shipped files in their exports maps, and no source condition', () => {
    for (const { name, manifest, files } of packed) {
      expect(JSON.stringify(manifest.exports), name).not.toContain('@slivingdoc/source');
      expect(JSON.stringify(manifest), name).not.toContain('workspace:');
      for (const [subpath, conditions] of Object.entries(manifest.exports))
        for (const target of Object.values(conditions))
          expect(files, `${name} ${subpath} → ${target}`).toContain(target);
      expect(files, name).toContain(manifest.types as string);
      // Every subpath of the workspace manifest survives packing (publishConfig.exports).
      const source = JSON.parse(
        readFileSync(join(repo, 'packages', name.split('/')[1]!, 'package.json'), 'utf8'),
      ) as Packed['manifest'];
      expect(Object.keys(manifest.exports), name).toEqual(Object.keys(source.exports));
    }
  });

  it('say where they come from, and carry no test-only dependency', () => {
    for (const { name, manifest } of packed) {
      expect(manifest.repository, name).toMatchObject({ type: 'git', url: expect.any(String) });
      expect(manifest.homepage, name).toEqual(expect.stringMatching(/^https:\/\//));
      expect(manifest.bugs, name).toMatchObject({ url: expect.stringMatching(/^https:\/\//) });
      // The testing subpaths' needs (merge: memfs, store: vitest) are optional peers only.
      for (const testOnly of ['memfs', 'vitest'])
        expect(Object.keys(manifest.dependencies ?? {}), name).not.toContain(testOnly);
    }
  });
});

describe('the README example, from the tarballs, outside the monorepo', () => {
  it('compiles with strict tsc against the packed declarations and runs', () => {
    const app = join(work, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(
      join(app, 'package.json'),
      '{"name":"consumer","private":true,"type":"module"}\n',
    );
    // npm installs the tarballs side by side; the engine's own dependencies on the other
    // libraries resolve to them (same version), third-party ones to the registry or its cache.
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packed.map((p) => p.tarball)],
      { cwd: app, stdio: 'pipe', timeout: 600_000 },
    );
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    writeFileSync(join(app, 'src/example.ts'), example!);
    // Narrowing by code: this assignment compiles only if `err.reason` is narrowed.
    writeFileSync(
      join(app, 'src/narrowing.ts'),
      [
        "import { isDomainError, type ReasonOf } from '@slivingdoc/engine';",
        'export function reasonOfConflict(err: unknown): ReasonOf<"CONTENT_CONFLICT"> | undefined {',
        "  if (isDomainError(err) && err.code === 'CONTENT_CONFLICT') {",
        "    const reason: 'MERGE_CONFLICT' | 'UNRESOLVED_MARKERS' = err.reason;",
        '    return reason;',
        '  }',
        '  return undefined;',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          outDir: 'dist',
          // Only Node's own types come from outside the consumer (the compiler's host).
          typeRoots: [join(repo, 'node_modules/@types')],
          types: ['node'],
          skipLibCheck: false,
        },
        include: ['src'],
      }),
    );
    execFileSync(process.execPath, [tsc, '-p', app], { cwd: app, stdio: 'pipe' });
    const output = execFileSync(process.execPath, [join(app, 'dist/example.js')], {
      cwd: app,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: work, TMPDIR: work },
    });
    expect(output).toContain('generation 1:');
    expect(output).toContain("path: 'meeting.md'");
  }, 600_000);

  it('names only exported symbols in its Public API paragraph', () => {
    const api = /Public API:([\s\S]*?)Design decisions/.exec(readme)?.[1] ?? '';
    const declarations = readFileSync(join(repo, 'packages/engine/dist/index.d.ts'), 'utf8');
    const exported = new Set(
      [...declarations.matchAll(/^export \{([^}]*)\}/gm)].flatMap((match) =>
        // `x as y` exports `y`.
        (match[1] ?? '').split(',').map((name) =>
          name
            .trim()
            .replace(/^type /, '')
            .replace(/^.* as /, ''),
        ),
      ),
    );
    expect(exported).toContain('createNotebookService');
    // Members and option names the paragraph mentions, which are not exports.
    const members = ['pull', 'commit', 'localChanges', 'close', 'sets', 'notebookDir', 'code'];
    members.push('reason', 'action', 'retryable', 'workspaceRoot', 'RangeError');
    members.push('status', 'log', 'revert', 'actor', 'onProgress', 'mergeAdditions', 'keep');
    members.push('groupCommit', 'gateScope');
    members.push('acceptedGeneration', 'history', 'publication', 'files', 'readFile', 'blame');
    members.push('session', 'forget', 'commitsRefused', 'token', 'store', 'confined');
    for (const [, name] of api.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)(?:\([^`]*\))?`/g)) {
      if (!members.includes(name as string))
        expect(exported, 'the README names it').toContain(name);
    }
  });
});
