import { isAbsolute, resolve } from 'node:path';
import { configuration } from './refusal';

/** Where a value came from, named in refusals (`--bucket` or `SLIVINGDOC_BUCKET`). */
export type Source = string;

/** Quotes a user value for a refusal line, shortened so one line stays one short line. */
export function quote(value: string): string {
  const shown = value.length > 64 ? `${value.slice(0, 61)}...` : value;
  return JSON.stringify(shown);
}

/** SPEC §12: booleans are exactly `true`, `false`, `1`, `0`. */
export function parseBoolean(source: Source, raw: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw configuration(`${source}: ${quote(raw)} is not a boolean (true, false, 1 or 0)`);
}

/** SPEC §6/§12: `--merge-additions` is exactly `keep` or `conflict`. */
export function parseMergeAdditions(source: Source, raw: string): 'keep' | 'conflict' {
  if (raw === 'keep' || raw === 'conflict') return raw;
  throw configuration(`${source}: ${quote(raw)} is not keep or conflict`);
}

/** SPEC §12: integers are `[0-9]+` within their range. */
export function parseInteger(source: Source, raw: string, min: number, max: number): number {
  const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min}–${max}`;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw configuration(`${source}: ${quote(raw)} is not an integer ${range}`);
  }
  return value;
}

/**
 * SPEC §12: an endpoint is absolute http(s) with no user info, query or fragment; it is
 * normalised to a lower-case scheme and host without a trailing slash. The value is never
 * echoed: it may carry credentials.
 */
export function normaliseEndpoint(source: Source, raw: string): string {
  // Checked on the raw text first: a pasted secret may hold `/` and break URL parsing, and
  // no S3 endpoint needs an `@` anywhere.
  if (raw.includes('@')) throw configuration(`${source}: user info is not allowed in an endpoint`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw configuration(`${source}: not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configuration(`${source}: the scheme must be http or https`);
  }
  // `new URL` drops an empty `?` or `#`, so look at the raw text as well.
  if (url.search !== '' || raw.includes('?')) {
    throw configuration(`${source}: a query is not allowed in an endpoint`);
  }
  if (url.hash !== '' || raw.includes('#')) {
    throw configuration(`${source}: a fragment is not allowed in an endpoint`);
  }
  if (url.hostname === '') throw configuration(`${source}: the endpoint has no host`);
  // URL already lower-cases scheme and host and drops a default port.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** SPEC §7: no leading or trailing `/`, no empty, `.` or `..` segment, no backslash. */
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

/**
 * S3 bucket naming rules (3–63 characters of lower-case letters, digits, dots and hyphens,
 * starting and ending with a letter or digit): what AWS and the common S3-compatible
 * servers accept for new buckets.
 */
export function validateBucket(source: Source, raw: string): string {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw) || raw.includes('..')) {
    throw configuration(`${source}: ${quote(raw)} is not a valid bucket name`);
  }
  return raw;
}

/** A region is a short token; S3-compatible servers use names like `default` or `garage`. */
export function validateRegion(source: Source, raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(raw)) {
    throw configuration(`${source}: ${quote(raw)} is not a valid region`);
  }
  return raw;
}

/** SPEC §5/§12: a `:`-separated list; an empty item (`a::b`, a leading or trailing `:`) is an error. */
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
