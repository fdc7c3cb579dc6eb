import { isAbsolute, resolve } from 'node:path';
import { configuration } from './refusal';

/** Where a value came from, named in refusals (`--bucket` or `SLIVINGDOC_BUCKET`). */
export type Source = string;

/** Quotes a user value for a refusal line, shortened so one line stays one short line. */
export function quote(value: string): string {
  const shown = value.length > 64 ? `${value.slice(0, 61)}...` : value;
  return JSON.stringify(shown);
}

/** contract §6/§12: `--merge-additions` is exactly `keep` or `conflict`. */
export function parseMergeAdditions(source: Source, raw: string): 'keep' | 'conflict' {
  if (raw === 'keep' || raw === 'conflict') return raw;
  throw configuration(`${source}: ${quote(raw)} is not keep or conflict`);
}

/** contract §12: integers are `[0-9]+` within their range. */
export function parseInteger(source: Source, raw: string, min: number, max: number): number {
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min}–${max}`;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw configuration(`${source}: ${quote(raw)} is not an integer ${range}`);
  }
  return value;
}

/** contract §7: no leading or trailing `/`, no empty, `.` or `..` segment, no backslash. */
export function validatePrefix(source: Source, raw: string): string {
  if (raw === '') return raw;
  const bad = (why: string) => configuration(`${source}: ${quote(raw)} ${why}`);
  if (raw.includes('\\')) throw bad('contains a backslash');
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw bad('contains a control character');
  if (raw.startsWith('/') || raw.endsWith('/')) throw bad('starts or ends with /');
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw bad('has an empty, . or .. segment');
    }
  }
  return raw;
}

/** contract §5/§12: a `:`-separated list; an empty item (`a::b`, a leading or trailing `:`) is an error. */
export function splitList(source: Source, raw: string): string[] {
  const items = raw.split(':');
  if (items.some((item) => item === '')) {
    throw configuration(`${source}: ${quote(raw)} has an empty list item`);
  }
  return items;
}

/**
 * A configured file-system path: `~/` expands to the home directory (MCP hosts pass
 * arguments and environment without a shell), a relative path resolves against the
 * working directory. NUL can never name a file.
 */
export function resolveUserPath(source: Source, raw: string, cwd: string, home: string): string {
  if (raw.includes('\u0000')) throw configuration(`${source}: the path contains U+0000`);
  const expanded = raw === '~' ? home : raw.startsWith('~/') ? home + raw.slice(1) : raw;
  return isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
}
