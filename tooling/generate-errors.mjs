#!/usr/bin/env node
// Writes docs/errors.md from the error catalogue (packages/envelope/src/catalogue.ts), the
// single source of truth of contract §3. packages/envelope/test/errors-doc.test.ts fails when the
// committed file differs from what this writes. Vite's module runner loads the TypeScript
// source directly, so no build is needed first.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const root = join(fileURLToPath(import.meta.url), '../..');
const { module } = await runnerImport(join(root, 'packages/envelope/src/errors-doc.ts'), {
  configFile: false,
  logLevel: 'silent',
});
const target = join(root, 'docs/errors.md');
writeFileSync(target, module.renderErrorsMarkdown());
console.error(`generate-errors: wrote ${target}`);
