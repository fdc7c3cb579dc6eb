#!/usr/bin/env node
// The layer check: every import in a package must be either relative, a Node builtin, a
// package declared in that package's package.json, or a @slivingdoc package its layer may
// use (tooling/layers.json). Written by hand because no linter knows our layer order.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const builtins = new Set(builtinModules);
const importPattern =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

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
        if (!specifier || specifier.startsWith('.') || specifier.startsWith('/')) continue;
        if (specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = packageNameOf(specifier);
        if (name === ownName) continue;
        const where = relative(root, file);
        if (name.startsWith('@slivingdoc/')) {
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
