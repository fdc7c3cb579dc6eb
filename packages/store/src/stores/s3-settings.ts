import { StoreSettingError } from '../driver';

const refused = (reason: string) => new StoreSettingError(reason, { echoValue: true });
/** An endpoint is never echoed: a pasted URL may carry credentials. */
const refusedEndpoint = (reason: string) => new StoreSettingError(reason, { echoValue: false });

/**
 * S3 bucket naming rules (3–63 characters of lower-case letters, digits, dots and hyphens,
 * starting and ending with a letter or digit): what AWS and the common S3-compatible
 * servers accept for new buckets.
 */
export function parseBucket(raw: string): string {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw) || raw.includes('..')) {
    throw refused('is not a valid bucket name');
  }
  return raw;
}

/** A region is a short token; S3-compatible servers use names like `default` or `garage`. */
export function parseRegion(raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(raw)) throw refused('is not a valid region');
  return raw;
}

/**
 * contract §12: an endpoint is absolute http(s) with no user info, query or fragment; it is
 * normalised to a lower-case scheme and host without a trailing slash.
 */
export function parseEndpoint(raw: string): string {
  // Checked on the raw text first: a pasted secret may hold `/` and break URL parsing, and
  // no S3 endpoint needs an `@` anywhere.
  if (raw.includes('@')) throw refusedEndpoint('user info is not allowed in an endpoint');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refusedEndpoint('not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refusedEndpoint('the scheme must be http or https');
  }
  // `new URL` drops an empty `?` or `#`, so look at the raw text as well.
  if (url.search !== '' || raw.includes('?')) {
    throw refusedEndpoint('a query is not allowed in an endpoint');
  }
  if (url.hash !== '' || raw.includes('#')) {
    throw refusedEndpoint('a fragment is not allowed in an endpoint');
  }
  if (url.hostname === '') throw refusedEndpoint('the endpoint has no host');
  // URL already lower-cases scheme and host and drops a default port.
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}
