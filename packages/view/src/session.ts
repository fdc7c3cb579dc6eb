/**
 * Log-in sessions of the view. A token in the URL (`?token=…`, printed at start or from the
 * token file) is exchanged once for a random session id in an HttpOnly, SameSite=Strict cookie
 * and the URL is redirected without it, so the token leaves neither the address bar nor the
 * history nor a Referer. Each session has its own CSRF token for the state-changing forms.
 * Sessions live in memory only: they end with the process, and at the first request after
 * their token stopped verifying (removed from the token file); such a session's cookie is
 * answered "session ended" from then on.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TokenGrant } from '@slivingdoc/http';

/** The session cookie's name. */
export const SESSION_COOKIE = 'sld_view';

/** One logged-in browser. */
export interface Session {
  grant: TokenGrant;
  /** The login token, re-verified on every request; never put in a page or a log. */
  readonly token: string;
  /** Sent back in every state-changing form (synchroniser token). */
  csrf: string;
}

/** Sessions kept at most; the oldest is dropped first (a log-in loop cannot exhaust memory). */
const MAX_SESSIONS = 1000;

function secret(): string {
  return randomBytes(32).toString('base64url');
}

/** Equal strings, compared in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The sessions of one view. */
export class Sessions {
  readonly #byId = new Map<string, Session>();
  /**
   * Sessions ended by their token's removal, remembered (bounded) so every later request of
   * that browser says so; otherwise the page's own live poll, arriving first, would leave the
   * person's next click a bare "not logged in".
   */
  readonly #ended = new Set<string>();

  /** A new session for the login `token` and its `grant`; returns its id (the cookie value). */
  create(token: string, grant: TokenGrant): string {
    const id = secret();
    this.#byId.set(id, { grant, token, csrf: secret() });
    if (this.#byId.size > MAX_SESSIONS) {
      const oldest = this.#byId.keys().next().value;
      if (oldest !== undefined) this.#byId.delete(oldest);
    }
    return id;
  }

  /**
   * The session the request's cookie names, if any, with its token's grant as `verify` gives it
   * now. A token that no longer verifies ends the session at once (`ended`).
   */
  of(
    req: IncomingMessage,
    verify: (token: string) => TokenGrant | undefined,
  ): Session | 'ended' | undefined {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (id === undefined) return undefined;
    if (this.#ended.has(id)) return 'ended';
    const session = this.#byId.get(id);
    if (session === undefined) return undefined;
    const grant = verify(session.token);
    if (grant === undefined) {
      this.#byId.delete(id);
      this.#ended.add(id);
      if (this.#ended.size > MAX_SESSIONS) this.#ended.delete(this.#ended.values().next().value!);
      return 'ended';
    }
    session.grant = grant;
    return session;
  }
}

/** The value of one cookie in a Cookie header. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** The Set-Cookie value for a new session. */
export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict`;
}
