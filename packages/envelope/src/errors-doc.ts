import {
  ACTIONS,
  CATALOGUE,
  type CodeSpec,
  ENGINE_DETAILS,
  ERROR_CODES,
  FILE_REASONS,
  type FileReason,
} from './catalogue';

/** Escapes the one character that breaks a Markdown table cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/**
 * The Markdown of `docs/errors.md`, generated from the catalogue so the table and the code
 * cannot drift (`node tooling/generate-errors.mjs` writes it; a test compares).
 */
export function renderErrorsMarkdown(): string {
  const out: string[] = [
    '# Errors',
    '',
    '<!-- Generated from packages/envelope/src/catalogue.ts by `node tooling/generate-errors.mjs`. Do not edit by hand. -->',
    '',
    'Every domain error carries a stable `code`, a `reason` one level below it, an `action` naming the',
    'caller’s next step and a `retryable` verdict. Each reason has exactly one action and one verdict.',
    'Branch on these tokens, never on `message`, which is prose and may change between releases.',
    'A cancelled request is a protocol error, never one of these; so are the startup-only',
    'diagnostics, one redacted stderr line each (docs/cli.md): `INCOMPATIBLE_STORE` (exit 3, a',
    'definite wrong answer to the compatibility probe) and `store unreachable` (exit 1, no',
    'trustworthy answer within the probe’s retry budget; the condition a call reports as',
    'STORAGE_FAILURE · STORE_UNREACHABLE).',
    '',
    'READ_ONLY_SESSION · STORE_READ_ONLY and STORAGE_FAILURE · ACCESS_DENIED both come from the',
    'store refusing a request, at different times. STORE_READ_ONLY is decided once, at start-up:',
    'the compatibility probe’s first write was refused with the store’s own `AccessDenied` code',
    'while `current` could still be read, so the process runs as a reader (it logs so once, at',
    'info) and refuses every commit and revert before reading or changing anything until it is',
    'restarted. ACCESS_DENIED is met during a call: credentials revoked or a policy changed while',
    'the process runs (a writer that lost write access gets it on its next commit; nothing is',
    'published and the notebook directory keeps its edits), a prefix the credentials cannot read,',
    'or any other 401 or 403 of the store (a wrong signature, a skewed clock, a quota). Credentials',
    'that can neither write nor read the prefix refuse start-up (docs/cli.md).',
    '',
    '## Codes and reasons',
    '',
    '| code | reason | action | retryable | when it happens |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const code of ERROR_CODES) {
    const spec: CodeSpec = CATALOGUE[code];
    for (const [reason, r] of Object.entries(spec.reasons))
      out.push(`| ${code} | ${reason} | ${r.action} | ${r.retryable} | ${cell(r.when)} |`);
  }
  out.push('', '## What each code means', '', '| code | meaning |', '| --- | --- |');
  for (const code of ERROR_CODES) out.push(`| ${code} | ${cell(CATALOGUE[code].summary)} |`);
  out.push(
    '',
    '## Actions: what the caller should do',
    '',
    '| action | what to do |',
    '| --- | --- |',
  );
  for (const [action, what] of Object.entries(ACTIONS)) out.push(`| ${action} | ${cell(what)} |`);
  out.push(
    '',
    '## File reasons',
    '',
    'Each entry of `files` carries its own `reason`, a path relative to the request path and',
    'one-based inclusive, ordered, non-overlapping `ranges` (empty when it has no marker block).',
    '',
    '| file reason | meaning |',
    '| --- | --- |',
  );
  for (const [reason, meaning] of Object.entries(FILE_REASONS) as [FileReason, string][])
    out.push(`| ${reason} | ${cell(meaning)} |`);
  out.push(
    '',
    '## ENGINE_FAILED details',
    '',
    'An ENGINE_FAILED error carries `detail` only when the server classified the cause itself,',
    'and then only one of these fixed descriptions. An unclassified cause carries no detail; the',
    'operator finds the full cause in the log record with the same `diagnosticId`.',
    '',
    ...ENGINE_DETAILS.map((detail) => `- \`${detail}\``),
    '',
  );
  return out.join('\n');
}
