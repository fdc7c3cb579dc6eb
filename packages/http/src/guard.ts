import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Why a request is turned away before it is handled: an HTTP status and a short reason. */
export interface Refusal {
  readonly status: 400 | 401 | 403 | 404 | 405 | 413 | 429 | 503;
  readonly reason: string;
  /** The JSON-RPC error code of the body (default -32000, the SDK transport's own). */
  readonly code?: number;
  /** Extra response headers (`WWW-Authenticate`, `Retry-After`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The answer of a check: go on, or refuse. */
export type GuardResult = { readonly ok: true } | ({ readonly ok: false } & Refusal);

const OK: GuardResult = Object.freeze({ ok: true });

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return match?.[1];
}

/** The 401 every missing or wrong token gets; the reason never repeats what was presented. */
export function unauthorized(presented: string | undefined): Refusal {
  return {
    status: 401,
    reason: presented === undefined ? 'missing bearer token' : 'unknown bearer token',
    headers: { 'WWW-Authenticate': 'Bearer realm="slivingdoc"' },
  };
}

/** Where a listener listens, and which browser origins it lets in (none by default). */
export interface HostOriginPolicy {
  readonly listenHost: string;
  readonly port: number;
  readonly allowedOrigins?: readonly string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** `host` as it appears in a Host header or URL: IPv6 in brackets, lower case. */
export function hostForUrl(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return isIP(bare) === 6 ? `[${bare}]` : bare;
}

/**
 * Every Host header value a request to this listener may carry: the listen address and the
 * loopback names, each with the port. A DNS-rebinding page's requests carry its own name.
 * The same list configures the MCP SDK transport's own DNS-rebinding check.
 */
export function allowedHostHeaders(listenHost: string, port: number): string[] {
  const names = new Set([hostForUrl(listenHost), ...LOOPBACK_NAMES]);
  // A wildcard bind is reached by a concrete address, never by the wildcard itself.
  names.delete('0.0.0.0');
  names.delete('[::]');
  return [...names].map((name) => `${name}:${port}`);
}

/** The browser origins of this listener itself (`http://127.0.0.1:PORT`, …), for a page it serves. */
export function listenerOrigins(listenHost: string, port: number): string[] {
  return allowedHostHeaders(listenHost, port).map((host) => `http://${host}`);
}

/**
 * The DNS-rebinding and cross-site check, done before any other handling: the Host header
 * must name the listen address or a loopback name with the listener's port, and an Origin
 * header, when present, must be one of `allowedOrigins` exactly (an empty list lets no
 * browser page in). A 403 otherwise.
 */
export function checkHostAndOrigin(req: IncomingMessage, policy: HostOriginPolicy): GuardResult {
  const host = req.headers.host?.toLowerCase();
  if (host === undefined || !allowedHostHeaders(policy.listenHost, policy.port).includes(host))
    return { ok: false, status: 403, reason: 'Host header names another server' };
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const allowed = (policy.allowedOrigins ?? []).map((entry) => entry.toLowerCase());
    if (!allowed.includes(origin.toLowerCase()))
      return { ok: false, status: 403, reason: 'Origin not allowed' };
  }
  return OK;
}
