import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');

/** What each layer may import (README "Layout"): a folder below src/, or a top-level file by name. */
const ALLOWED: Record<string, string[]> = {
  errors: [],
  model: ['errors', 'model'],
  storage: ['errors', 'model', 'storage'],
  operations: ['errors', 'model', 'storage', 'operations'],
  index: ['errors', 'model', 'storage', 'operations'],
  // The `./author` entry point (the author-name rule alone, for a caller that bundles).
  author: ['model'],
  // The `./testing` entry point (memfs-backed object db, pack codec for tests above).
  testing: ['errors', 'model', 'storage', 'operations'],
};

/** The layer of a file below `src/`: its folder, or its name for a top-level file. */
function layerOf(file: string): string {
  const rel = relative(SRC, file);
  const [first] = rel.split('/');
  return rel.includes('/') ? (first as string) : (first as string).replace(/\.ts$/, '');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Relative module specifiers of `file`'s imports and re-exports. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/\bfrom '(\.[^']*)'/g)].map((match) => match[1] as string);
}

describe('merge package layout', () => {
  const files = sourceFiles(SRC);

  it('every source file sits in a known layer and has a kebab-case name', () => {
    for (const file of files) {
      expect(Object.keys(ALLOWED)).toContain(layerOf(file));
      expect(relative(SRC, file)).toMatch(/^([a-z]+\/)?[a-z0-9]+(-[a-z0-9]+)*\.ts$/);
    }
  });

  it('a file imports only from its own layer or a lower one', () => {
    const offending: string[] = [];
    for (const file of files) {
      const allowed = ALLOWED[layerOf(file)] ?? [];
      for (const specifier of relativeImports(file)) {
        const target = layerOf(`${resolve(dirname(file), specifier)}.ts`);
        if (!allowed.includes(target))
          offending.push(`${relative(SRC, file)} imports ${specifier}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('the check sees a lower layer importing a higher one', () => {
    // The rule above must be able to fail: the model may not import storage.
    const model = `${SRC}/model/tree-codec.ts`;
    const target = layerOf(`${resolve(dirname(model), '../storage/object-db')}.ts`);
    expect(ALLOWED[layerOf(model)]).not.toContain(target);
  });
});
