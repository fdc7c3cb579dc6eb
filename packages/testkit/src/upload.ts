/**
 * HTTP uploads as clients really send them, for the tests of refusals answered before a body
 * is read whole: a paced writer, a client that never stops sending, one that stalls.
 */
import { type ClientRequest, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { until } from './until';

/** What a client saw of one POST: the answer (if any), whether the connection was cut first. */
export interface UploadOutcome {
  readonly status?: number;
  readonly body?: string;
  /** The answer's Connection header. */
  readonly connection?: string;
  /** The error the request ended with (a reset after the answer, when the server cut it). */
  readonly error?: string;
  /** Bytes the client handed to the socket before the request ended. */
  readonly sent: number;
  /** The server answered `100 Continue`. */
  readonly continued: boolean;
}

export interface UploadOptions {
  /** Bytes of the body. */
  readonly size: number;
  /** Streamed without a Content-Length. */
  readonly chunked?: boolean;
  /** Milliseconds between 64 KiB chunks (a slow writer); none by default. */
  readonly pauseMs?: number;
  readonly headers?: Record<string, string>;
}

/**
 * POSTs a body with Node's client and settles once the answer was read and the request ended, or the request
 * failed. Never waits forever on an error: an error with no answer settles with the error.
 */
export function upload(url: string, options: UploadOptions): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const { size, chunked = false, pauseMs = 0 } = options;
    const req: ClientRequest = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(size) }),
        ...options.headers,
      },
    });
    let sent = 0;
    let answer: { status: number; body: string; connection?: string } | undefined;
    let error: string | undefined;
    let requestEnded = false;
    let continued = false;
    const settle = () => {
      if (answer === undefined && error === undefined) return;
      if (answer !== undefined && !requestEnded && error === undefined) return;
      resolve({ ...answer, ...(error === undefined ? {} : { error }), sent, continued });
    };
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, body, connection: res.headers.connection };
        settle();
      });
    });
    req.on('finish', () => {
      requestEnded = true;
      settle();
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
      requestEnded = true;
      settle();
    });
    req.on('close', () => {
      requestEnded = true;
      if (answer === undefined && error === undefined) error = 'closed without an answer';
      settle();
    });
    req.on('continue', () => {
      continued = true;
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while (sent < size && !req.destroyed) {
        const part = chunk.subarray(0, Math.min(chunk.length, size - sent));
        sent += part.length;
        const more = req.write(part);
        if (pauseMs > 0) return void setTimeout(pump, pauseMs);
        if (!more) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end();
    };
    if (/^100-continue$/i.test(options.headers?.Expect ?? '')) {
      req.flushHeaders();
      req.once('continue', pump);
      // Refused before any 100: the body is never sent, and the client gives up the request.
      req.once('response', (res) =>
        res.once('end', () => {
          if (sent === 0) req.destroy();
        }),
      );
    } else pump();
  });
}

/** A raw connection to `url` that keeps its side open when the server closes its own. */
function rawConnection(url: string): { socket: Socket; head: (headers: string) => string } {
  const { hostname, port } = new URL(url);
  const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
  const path = new URL(url).pathname;
  return {
    socket,
    head: (headers) => `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${headers}\r\n`,
  };
}

/** The status of the answer a raw connection received, if one came. */
function statusOf(received: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d+)/.exec(received);
  return match === null ? undefined : Number(match[1]);
}

/** A client that stalled after the start of its body and trickles a byte every 20 ms. */
export interface StalledUpload {
  /** The answer's status. */
  readonly status: number;
  /** True once the server closed the connection whole (a write failed, or it closed). */
  readonly cut: () => boolean;
  /** Ends the connection from the client's side. */
  readonly destroy: () => void;
}

/**
 * Sends a POST's head (with `headers`, CRLF-terminated lines) declaring `declared` bytes and
 * the first 1,000 of them, then trickles one byte every 20 ms and keeps its side open when
 * the server closes its own (as an uploading client does); resolves once the answer came.
 */
export async function stalledUpload(
  url: string,
  declared: number,
  headers = '',
): Promise<StalledUpload> {
  const { socket, head } = rawConnection(url);
  let received = '';
  let cut = false;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  const trickle = setInterval(() => socket.write('a'), 20);
  const stop = () => {
    cut = true;
    clearInterval(trickle);
  };
  socket.on('error', stop);
  socket.on('close', stop);
  socket.write(`${head(`${headers}Content-Length: ${declared}\r\n`)}${'a'.repeat(1000)}`);
  await until(() => received.includes('\r\n\r\n') || cut, 'an answer to the stalled upload');
  const status = statusOf(received);
  if (status === undefined) throw new Error('the stalled upload was closed without an answer');
  return {
    status,
    cut: () => cut,
    destroy: () => {
      stop();
      socket.destroy();
    },
  };
}

/** What a client that never stops sending saw. */
export interface PushingOutcome {
  /** The answer's status, if one was read before the connection ended. */
  readonly status?: number;
  /** How the connection ended: the socket error's code, or `closed`. */
  readonly ended: string;
  /** Bytes handed to the socket before it ended. */
  readonly sent: number;
}

/**
 * Sends a POST declaring `size` bytes and sends them all at full speed whatever the server
 * answers (a client that never reads the answer), until the connection ends.
 */
export function pushingUpload(url: string, size: number, headers = ''): Promise<PushingOutcome> {
  const { socket, head } = rawConnection(url);
  let received = '';
  let sent = 0;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  const ended = new Promise<PushingOutcome>((resolve) => {
    const end = (how: string) => resolve({ status: statusOf(received), ended: how, sent });
    socket.once('error', (error: NodeJS.ErrnoException) => end(error.code ?? 'error'));
    socket.once('close', () => end('closed'));
  });
  socket.write(head(`${headers}Content-Length: ${size}\r\n`));
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const pump = () => {
    while (sent < size && !socket.destroyed) {
      sent += chunk.length;
      if (!socket.write(chunk)) return void socket.once('drain', pump);
    }
    // Everything sent and the server still reading: end our side so the connection can close.
    if (!socket.destroyed) socket.end();
  };
  pump();
  return ended;
}
