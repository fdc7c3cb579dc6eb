import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogueEntries, FILE_REASONS, renderErrorsMarkdown } from '../src';

const committed = join(import.meta.dirname, '../../../docs/errors.md');

describe('docs/errors.md', () => {
  it('is exactly what the catalogue generates (run `node tooling/generate-errors.mjs`)', () => {
    expect(readFileSync(committed, 'utf8')).toBe(renderErrorsMarkdown());
  });

  it('lists every reason with its action and verdict, and every file reason', () => {
    const doc = renderErrorsMarkdown();
    for (const { code, reason, spec } of catalogueEntries())
      expect(doc).toContain(`| ${code} | ${reason} | ${spec.action} | ${spec.retryable} |`);
    for (const reason of Object.keys(FILE_REASONS)) expect(doc).toContain(`| ${reason} |`);
  });
});
