#!/usr/bin/env node
// Runs after `changeset version` (root script `version-packages`): sets the two versions in
// apps/slivingdoc/server.json (`version` and `packages[0].version`, the MCP registry entry) to
// the app's new package.json version, leaving the rest of the file byte for byte.
// Usage: node tooling/sync-server-json.mjs [<app dir>]   (default: apps/slivingdoc)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const appDir = process.argv[2] ?? join(import.meta.dirname, '../apps/slivingdoc');
const { version } = JSON.parse(readFileSync(join(appDir, 'package.json'), 'utf8'));
const file = join(appDir, 'server.json');
const text = readFileSync(file, 'utf8');
const server = JSON.parse(text);
const versionKeys = text.match(/"version": "[^"]*"/g) ?? [];
// Exactly the two the schema has; anything else means the file changed shape: fail loudly.
if (versionKeys.length !== 2 || server.packages?.length !== 1) {
  throw new Error(`${file}: expected one top-level and one package version`);
}
const updated = text.replace(/"version": "[^"]*"/g, `"version": ${JSON.stringify(version)}`);
if (updated !== text) writeFileSync(file, updated);
const check = JSON.parse(updated);
if (check.version !== version || check.packages[0].version !== version) {
  throw new Error(`${file}: the versions were not updated`);
}
console.log(`server.json: version ${version}`);
