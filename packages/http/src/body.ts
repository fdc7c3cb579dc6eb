import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Refusal } from './guard';
import { lingerIfUnread } from './linger';

/** The largest request body any slivingdoc listener reads: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A body read whole, or the 413 for one beyond the limit. */
export type BodyResult =
  | { readonly ok: true; readonly body: Buffer }
  | ({ readonly ok: false } & Refusal);

const tooLarge = (limit: number): Refusal => ({
  status: 413,
  reason: `request body larger than ${limit} bytes`,
});

/**
 * Reads a request body of at most `limit` bytes. A declared Content-Length beyond it is
 * refused before a byte is read (and a client that sent `Expect: 100-continue` is never told
 * to go on); a body that grows beyond it while streaming is refused as soon as it does. The
 * rest of a refused body is left unread: answering it through {@link writeRefusal} (or
 * {@link lingerIfUnread}) drains it within the lingering bounds and closes the connection.
 */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number = MAX_BODY_BYTES,
): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit)
    return Promise.resolve({ ok: false, ...tooLarge(limit) });
  if (/^100-continue$/i.test(req.headers.expect ?? '') && !res.headersSent) res.writeContinue();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        resolve({ ok: false, ...tooLarge(limit) });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ ok: true, body: Buffer.concat(chunks, size) }));
    req.once('error', reject);
  });
}

/**
 * Answers a refusal: its status, headers and a JSON-RPC error body (the shape MCP clients
 * read; a page reads `error.message`). A request whose body was not read whole is answered
 * with `Connection: close` and a lingering close, so its client reads the answer; so is
 * every 413.
 */
export function writeRefusal(res: ServerResponse, refusal: Refusal): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  lingerIfUnread(res);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: refusal.code ?? -32000, message: refusal.reason },
    id: null,
  });
  res.writeHead(refusal.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...(refusal.status === 413 ? { Connection: 'close' } : {}),
    ...refusal.headers,
  });
  res.end(body);
}
