/**
 * Lingering close: a refusal answered before its request body was read whole keeps reading
 * and discarding the rest for a bounded time and size before the connection closes, so the
 * client reads the answer instead of a reset (nginx's `lingering_close`).
 *
 * Why by hand: Node's HTTP server closes a `Connection: close` socket as soon as the answer is
 * flushed. A socket closed with unread bytes in its receive queue, or that receives bytes
 * after it closed, makes the kernel answer with a TCP reset, and a reset discards the answer
 * the client had not read yet: an uploading client sees ECONNRESET or EPIPE, not the 413.
 * Node has no option for this; the server ends such a socket through `socket.destroySoon()`,
 * so a lingering socket's `destroySoon` only half-closes it (the server allows half-open
 * sockets) while the rest of the body is drained.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How far a lingering close goes, three ways (docs/hosts.md, "Refusals"). */
export interface LingerBounds {
  /** Bytes of a refused body read and discarded after the answer; past them the connection is cut. */
  readonly maxBytes: number;
  /** Milliseconds a refused connection may linger before it is cut. */
  readonly maxMs: number;
  /** Connections lingering at once; a refusal beyond them closes its connection at once. */
  readonly maxConnections: number;
}

/**
 * The bounds every listener uses: 4 MiB (a body four times the 1 MiB limit is still answered
 * readably), 10 s (ample for a client on a loaded machine to read a short answer), 32
 * connections (unauthenticated clients cannot hold more sockets than that).
 */
export const DEFAULT_LINGER_BOUNDS: LingerBounds = Object.freeze({
  maxBytes: 4 * 1024 * 1024,
  maxMs: 10_000,
  maxConnections: 32,
});

/** True while part of the request's body is still to arrive (it was refused unread). */
export function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false;
  const declared = Number(req.headers['content-length'] ?? 0);
  return req.headers['transfer-encoding'] !== undefined || declared > 0;
}

/** The lingering connections of one listener. */
export class Lingering {
  readonly #bounds: LingerBounds;
  readonly #sockets = new Set<Socket>();

  constructor(bounds: LingerBounds = DEFAULT_LINGER_BOUNDS) {
    this.#bounds = bounds;
  }

  /** Connections lingering now. */
  get size(): number {
    return this.#sockets.size;
  }

  /**
   * Makes the connection of a refused request linger once `res` is sent: its body is read and
   * discarded until the client closes, or the byte or time bound is spent (then it is cut).
   * Returns false when the cap on lingering connections is reached: the connection then closes
   * as soon as the answer is sent.
   */
  adopt(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    if (this.#sockets.has(socket)) return true;
    if (this.#sockets.size >= this.#bounds.maxConnections) return false;
    this.#sockets.add(socket);
    const cut = () => socket.destroy();
    let discarded = 0;
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > this.#bounds.maxBytes) cut();
    });
    req.resume();
    const timer = setTimeout(cut, this.#bounds.maxMs);
    socket.once('close', () => {
      clearTimeout(timer);
      this.#sockets.delete(socket);
    });
    // Called by the server once the `Connection: close` answer is flushed: send FIN only; the
    // socket closes when the client has closed its side too (or a bound cuts it).
    socket.destroySoon = () => {
      socket.end();
    };
    res.once('close', () => {
      if (!res.writableFinished) cut();
    });
    return true;
  }

  /** Cuts every lingering connection (a listener that closes never waits for one). */
  cutAll(): void {
    for (const socket of this.#sockets) socket.destroy();
  }
}

const listenerOfSocket = new WeakMap<Socket, Lingering>();
/** For a server not started by `startListener` (none in the product): one shared set. */
const unlisted = new Lingering();

/** Records that `socket` was accepted by the listener whose lingering connections are `lingering`. */
export function trackConnection(socket: Socket, lingering: Lingering): void {
  listenerOfSocket.set(socket, lingering);
}

/**
 * Prepares the answer to a request whose body was not read whole: `Connection: close` and a
 * lingering close (returns true), or nothing when the body was read (false). Call before the
 * answer is written.
 */
export function lingerIfUnread(res: ServerResponse): boolean {
  const req = res.req;
  if (!hasUnreadBody(req)) return false;
  if (!res.headersSent) res.setHeader('Connection', 'close');
  (listenerOfSocket.get(req.socket) ?? unlisted).adopt(req, res);
  return true;
}
