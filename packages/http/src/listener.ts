import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { hostForUrl } from './guard';
import { DEFAULT_LINGER_BOUNDS, type LingerBounds, Lingering, trackConnection } from './linger';

/** How long an idle keep-alive connection stays open (announced as `Keep-Alive: timeout=65`). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Where to listen. `port` 0 picks a free port (tests). */
export interface ListenerOptions {
  readonly host: string;
  readonly port: number;
  /** Required for any address that is not loopback: such traffic leaves the machine unencrypted. */
  readonly allowPublic?: boolean;
  /** Told once when a public address is bound (the caller's logger, at warn). */
  readonly onWarning?: (message: string) => void;
  /** Bounds of the lingering close after a refusal (default {@link DEFAULT_LINGER_BOUNDS}). */
  readonly linger?: LingerBounds;
}

/** A listening HTTP server. */
export interface Listener {
  /** `http://HOST:PORT` as a client reaches it (IPv6 in brackets). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Connections lingering after a refusal now (docs/hosts.md, "Refusals"). */
  readonly lingering: () => number;
  /**
   * Stops accepting connections, cuts every lingering one at once, waits for the open
   * requests to end (at most `graceMs`, default 5 s) and then closes every connection still
   * open (an idle SSE stream).
   */
  close(graceMs?: number): Promise<void>;
}

/** A host name or address that reaches only this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** A public bind refused without `allowPublic`. */
export class PublicBindError extends Error {
  constructor(host: string) {
    super(
      `${host} is not a loopback address: binding it exposes the notebook to the network unencrypted; pass the explicit public-listen option to do so`,
    );
    this.name = 'PublicBindError';
  }
}

/**
 * Starts an HTTP server on a loopback address, or on another address only when
 * `allowPublic` is set (then `onWarning` is told that traffic is not encrypted). Resolves
 * once it listens; rejects with the bind error (EADDRINUSE, EACCES) or {@link PublicBindError}.
 */
export async function startListener(
  options: ListenerOptions,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Listener> {
  if (!isLoopbackHost(options.host)) {
    if (!options.allowPublic) throw new PublicBindError(options.host);
    options.onWarning?.(
      `listening on ${options.host}, which is not loopback: traffic (bearer tokens included) is not encrypted; put a TLS proxy in front of it`,
    );
  }
  const server = createServer(handler);
  // Longer than any client's own idle limit (undici's fetch, which the MCP SDK uses, closes an
  // idle connection after 4 s; Node's server default is 5 s): otherwise a client's timer that
  // runs late on a loaded machine reuses a connection the server has just closed, and its
  // POST fails with "other side closed" although nothing went wrong.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const lingering = new Lingering(options.linger ?? DEFAULT_LINGER_BOUNDS);
  server.on('connection', (socket) => trackConnection(socket, lingering));
  // Without this listener Node answers `Expect: 100-continue` itself before the handler runs;
  // with it, `readBody` says 100 only to a body it will read, and a refusal comes instead.
  server.on('checkContinue', handler);
  const bindHost = options.host.replace(/^\[(.*)\]$/, '$1');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, bindHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = hostForUrl(options.host);
  return {
    url: `http://${host}:${port}`,
    host,
    port,
    lingering: () => lingering.size,
    close: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        lingering.cutAll();
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.once('close', () => clearTimeout(timer));
      }),
  };
}
