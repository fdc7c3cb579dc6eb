#!/usr/bin/env node
// The layer check: every import in a package must be either relative and inside the package,
// a Node builtin, a package declared in that package's package.json, or a @slivingdoc package
// its layer may use (tooling/layers.json); the test kit only outside `src/`. Written by hand
// because no linter knows our layer order.
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
 * Checks every package under `root`/packages and `root`/apps (and `root`/tooling).
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
  for (const dir of packageDirs) {
    const layer = basename(dir);
    const allowed = layers[layer];
    const declared = declaredDependencies(join(dir, 'package.json'));
    const ownName = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name;
    for (const file of sourceFiles(dir)) {
      const inSrc = relative(dir, file).startsWith('src');
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(importPattern)) {
        const specifier = match[1] ?? match[2] ?? match[3];
        if (!specifier) continue;
        if (specifier.startsWith('.') || specifier.startsWith('/')) {
          const problem = relativeImportProblem(root, dir, file, specifier);
          if (problem) violations.push({ file: relative(root, file), specifier, problem });
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
  return violations;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = process.argv[2] ?? join(fileURLToPath(import.meta.url), '../..');
  const violations = checkLayers(root);
  for (const v of violations) console.error(`layer check: ${v.file}: ${v.specifier}: ${v.problem}`);
  if (violations.length > 0) process.exit(1);
  console.error('layer check: ok');
}
