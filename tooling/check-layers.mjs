#!/usr/bin/env node
// The layer check: every import in a package must be either relative and inside the package,
// a Node builtin, a package declared in that package's package.json, or a @slivingdoc package
// its layer may use (tooling/layers.json); the test kit only outside `src/`. And no file may
// reach itself again through relative imports (an import cycle), counting `import type` and
// `export ... from`: a cycle, even a type-only one, ties modules that should read one after the
// other. Written by hand because no linter knows our layer order.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const builtins = new Set(builtinModules);
const importPattern =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** Shared by tests and benchmarks only: product code (`src/` of a product package) never imports it. */
const TEST_KIT = '@slivingdoc/testkit';

/**
 * The one sanctioned way out of a package by relative path: its root build configuration
 * importing the repository's shared build configuration, as its tsconfig.json extends
 * ../../tsconfig.base.json. Node 20 loads these files before any TypeScript transform of a
 * bare import (vite and tsup leave bare imports to Node), so they cannot import a package
 * written in TypeScript (docs/architecture.md, "Test infrastructure").
 * Keys: file relative to its package; values: the repository file it may import.
 */
const BUILD_CONFIG_IMPORTS = {
  'vitest.config.ts': 'tooling/vitest-shared.ts',
  'tsup.config.ts': 'tooling/tsup-library.ts',
};

/**
 * Why a relative import of `file` (in the package at `dir`) is illegal, or undefined when it
 * stays inside the package or is the exempt build configuration import.
 * @param {string} root @param {string} dir @param {string} file @param {string} specifier
 */
function relativeImportProblem(root, dir, file, specifier) {
  const target = resolve(dirname(file), specifier);
  if (target === dir || target.startsWith(dir + sep)) return undefined;
  const exempt = BUILD_CONFIG_IMPORTS[relative(dir, file)];
  if (exempt && target === join(root, exempt)) return undefined;
  return `relative import leaves its package (reaches ${relative(root, target)}): import the package that owns it by name`;
}

const SOURCE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];

/**
 * The file a relative specifier names, as TypeScript resolves it (`./a`, `./a.ts`, `./a.js` for
 * `a.ts`, `./dir` for `dir/index.ts`), or undefined when it names no source file.
 * @param {string} file @param {string} specifier
 */
function resolveSource(file, specifier) {
  const target = resolve(dirname(file), specifier);
  const stem = target.replace(/\.(m?js)$/, '');
  const candidates = [
    target,
    ...SOURCE_EXTENSIONS.map((ext) => stem + ext),
    ...SOURCE_EXTENSIONS.map((ext) => join(target, `index${ext}`)),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

/**
 * Every import cycle among `files` (relative imports only: the layer order already forbids a
 * cycle between packages), one per strongly connected group, named by its shortest loop.
 * @param {string} root @param {Map<string, Map<string, string>>} edges file → (target → specifier)
 * @returns {{ file: string, specifier: string, problem: string }[]}
 */
function importCycles(root, edges) {
  const groups = stronglyConnected([...edges.keys()], (file) => [
    ...(edges.get(file)?.keys() ?? []),
  ]);
  const cycles = [];
  for (const group of groups) {
    const members = new Set(group);
    const start = [...members].sort()[0];
    const selfLoop = edges.get(start)?.has(start);
    if (members.size === 1 && !selfLoop) continue;
    const loop = shortestLoop(start, (file) =>
      [...(edges.get(file)?.keys() ?? [])].filter((next) => members.has(next)),
    );
    const names = loop.map((file) => relative(root, file));
    cycles.push({
      file: names[0],
      specifier: /** @type {string} */ (edges.get(loop[0])?.get(loop[1])),
      problem: `import cycle: ${names.join(' → ')}`,
    });
  }
  return cycles;
}

/**
 * Tarjan's strongly connected components, iterative (no recursion limit on deep chains).
 * @param {string[]} nodes @param {(node: string) => string[]} next @returns {string[][]}
 */
function stronglyConnected(nodes, next) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const groups = [];
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work = [{ node: root, targets: next(root), at: 0 }];
    index.set(root, index.size);
    low.set(root, index.get(root));
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (frame.at < frame.targets.length) {
        const target = frame.targets[frame.at++];
        if (!index.has(target)) {
          index.set(target, index.size);
          low.set(target, index.get(target));
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, targets: next(target), at: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(target)));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node), low.get(frame.node)));
      if (low.get(frame.node) === index.get(frame.node)) {
        const group = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          group.push(member);
        } while (member !== frame.node);
        groups.push(group);
      }
    }
  }
  return groups;
}

/**
 * The shortest path from `start` back to itself (breadth first), as [start, …, start].
 * @param {string} start @param {(node: string) => string[]} next @returns {string[]}
 */
function shortestLoop(start, next) {
  const cameFrom = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const node = /** @type {string} */ (queue.shift());
    for (const target of next(node).sort()) {
      if (target === start) {
        const between = [];
        for (let at = node; at !== start; at = cameFrom.get(at)) between.unshift(at);
        return [start, ...between, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

/** @param {string} specifier */
function packageNameOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** @param {string} dir @returns {string[]} */
function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const full = join(dir, entry);
    if (entry === 'node_modules' || entry === 'dist') return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|js|mjs)$/.test(entry) && !entry.endsWith('.d.ts') ? [full] : [];
  });
}

/** @param {string} file */
function declaredDependencies(file) {
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  return new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.devDependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
    ...Object.keys(pkg.optionalDependencies ?? {}),
  ]);
}

/**
 * Checks every package under `root`/packages and `root`/apps (and `root`/tooling): layers,
 * declared dependencies, and import cycles.
 * @param {string} root repository root
 * @returns {{ file: string, specifier: string, problem: string }[]} violations
 */
export function checkLayers(root) {
  const layers = JSON.parse(readFileSync(join(root, 'tooling/layers.json'), 'utf8'));
  const rootDeclared = declaredDependencies(join(root, 'package.json'));
  const packageDirs = ['packages', 'apps']
    .flatMap((group) =>
      existsSync(join(root, group))
        ? readdirSync(join(root, group)).map((name) => join(root, group, name))
        : [],
    )
    .concat(existsSync(join(root, 'tooling/package.json')) ? [join(root, 'tooling')] : [])
    .filter((dir) => existsSync(join(dir, 'package.json')));
  const violations = [];
  /** @type {Map<string, Map<string, string>>} */
  const edges = new Map();
  for (const dir of packageDirs) {
    const layer = basename(dir);
    const allowed = layers[layer];
    const declared = declaredDependencies(join(dir, 'package.json'));
    const ownName = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
    for (const file of sourceFiles(dir)) {
      const inSrc = relative(dir, file).startsWith('src');
      const text = readFileSync(file, 'utf8');
      const imports = new Map();
      edges.set(file, imports);
      for (const match of text.matchAll(importPattern)) {
        const specifier = match[1] ?? match[2] ?? match[3];
        if (!specifier) continue;
        if (specifier.startsWith('.') || specifier.startsWith('/')) {
          const problem = relativeImportProblem(root, dir, file, specifier);
          if (problem) violations.push({ file: relative(root, file), specifier, problem });
          const target = resolveSource(file, specifier);
          if (target && !imports.has(target)) imports.set(target, specifier);
          continue;
        }
        if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = packageNameOf(specifier);
        if (name === ownName) continue;
        const where = relative(root, file);
        if (name === TEST_KIT) {
          if (inSrc && layer !== 'testkit') {
            violations.push({
              file: where,
              specifier,
              problem: `product code may not import the test kit '${TEST_KIT}'`,
            });
          }
        } else if (name.startsWith('@slivingdoc/')) {
          const target = name.slice('@slivingdoc/'.length);
          if (!allowed) {
            violations.push({
              file: where,
              specifier,
              problem: `layer '${layer}' is not in tooling/layers.json`,
            });
          } else if (!allowed.includes(target)) {
            violations.push({
              file: where,
              specifier,
              problem: `layer '${layer}' may not import '${target}'`,
            });
          }
        }
        const isDeclared = declared.has(name) || (!inSrc && rootDeclared.has(name));
        if (!isDeclared) {
          violations.push({
            file: where,
            specifier,
            problem: `'${name}' is not declared in ${relative(root, join(dir, 'package.json'))}`,
          });
        }
      }
    }
  }
  return violations.concat(importCycles(root, edges));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = process.argv[2] ?? join(fileURLToPath(import.meta.url), '../..');
  const violations = checkLayers(root);
  for (const v of violations) console.error(`layer check: ${v.file}: ${v.specifier}: ${v.problem}`);
  if (violations.length > 0) process.exit(1);
  console.error('layer check: ok');
}
