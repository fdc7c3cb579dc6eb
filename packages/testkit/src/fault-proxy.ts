/**
 * A loopback HTTP proxy placed between an S3 client and a real S3 endpoint that injects
 * network faults deterministically: each request is matched against an ordered rule list
 * (method + object-key pattern + occurrence number) and the first matching rule decides
 * what happens to it.
 *
 * Written by hand because the general-purpose fault proxies (toxiproxy and friends) work
 * per connection and per byte, not per S3 request and per occurrence, and they need a
 * daemon outside the test process; a few dozen lines of node:http do exactly what the
 * ambiguity paths of contract §9 need.
 *
 * Requests are forwarded byte for byte with their original headers (the Host header
 * included), so SigV4 signatures made for the proxy's address still verify upstream.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What a matching rule does to one request. */
export type Fault =
  /** Forward the request, let the server apply it, then close the client's connection without an answer. */
  | { kind: 'drop-response' }
  /** Reset the client's connection before anything reaches the server. */
  | { kind: 'reset-before' }
  /** Hold the request for `ms` milliseconds, then forward it (even if the client gave up meanwhile). */
  | { kind: 'delay'; ms: number }
  /** Answer with an S3 error document without forwarding (`SlowDown` is S3's throttling answer). */
  | { kind: 'error'; status: 500 | 503; code: 'InternalError' | 'ServiceUnavailable' | 'SlowDown' };

/** One entry of the rule list. */
export interface FaultRule {
  /** HTTP method to match (`PUT`, `GET`, …); any method when absent. */
  method?: string;
  /** Pattern the object key (the path after the bucket, decoded, without the query) must match. */
  key?: RegExp;
  /** Pattern the raw query string must match (e.g. `/uploads/` for multipart calls). */
  query?: RegExp;
  /**
   * 1-based occurrence numbers, counted over the requests this rule matched, on which the
   * fault fires; every occurrence when absent.
   */
  on?: number[];
  /**
   * Fires only when this returns true (a seeded random choice, for a steady fault rate); when
   * it declines, the next rule decides.
   */
  sample?: () => boolean;
  fault: Fault;
}

/** What the proxy saw and did, one record per request, in arrival order. */
export interface ProxyRecord {
  method: string;
  key: string;
  query: string;
  /** The fault applied, or `forward` for an untouched request. */
  action: Fault['kind'] | 'forward';
  /** True once the proxy holds the request's whole body. */
  bodyReceived: boolean;
  /** Status the upstream answered (absent when the request never reached it). */
  upstreamStatus?: number;
}

/** A running fault proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: use as the S3 endpoint. */
  readonly url: string;
  /** Every request seen so far. */
  readonly records: readonly ProxyRecord[];
  /** Replaces the rule list and resets every occurrence counter. */
  setRules(rules: FaultRule[]): void;
  /** Resolves once every forwarded or delayed request has finished upstream. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Splits a path-style request path into the bucket's object key and the query. */
function describeTarget(rawUrl: string): { key: string; query: string } {
  const url = new URL(rawUrl, 'http://proxy.invalid');
  const segments = url.pathname.split('/').slice(2); // ['', bucket, ...key]
  return { key: decodeURIComponent(segments.join('/')), query: url.search.replace(/^\?/, '') };
}

/** The client's headers minus `expect`: 100-continue is unsigned hop-by-hop negotiation, and the proxy already holds the whole body. */
function forwardedHeaders(req: IncomingMessage): IncomingMessage['headers'] {
  const { expect: _expect, ...rest } = req.headers;
  return rest;
}

function errorDocument(code: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by the fault proxy</Message><RequestId>fault-proxy</RequestId></Error>`;
}

/**
 * Starts a fault proxy on 127.0.0.1 in front of `target` (e.g. `http://127.0.0.1:7480`).
 * The S3 client must use path-style addressing so the proxy can see bucket and key.
 */
export async function startFaultProxy(opts: {
  target: string;
  rules?: FaultRule[];
}): Promise<FaultProxy> {
  const target = new URL(opts.target);
  let rules: FaultRule[] = opts.rules ?? [];
  let seen = new Map<FaultRule, number>();
  const records: ProxyRecord[] = [];
  const inFlight = new Set<Promise<void>>();
  const sockets = new Set<Socket>();

  const track = (work: Promise<void>): void => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  /** The first rule that matches, and whether its occurrence list selects this request. */
  const decide = (method: string, key: string, query: string): Fault | undefined => {
    for (const rule of rules) {
      if (rule.method !== undefined && rule.method !== method) continue;
      if (rule.key !== undefined && !rule.key.test(key)) continue;
      if (rule.query !== undefined && !rule.query.test(query)) continue;
      const occurrence = (seen.get(rule) ?? 0) + 1;
      seen.set(rule, occurrence);
      if (rule.on !== undefined && !rule.on.includes(occurrence)) return undefined;
      if (rule.sample !== undefined && !rule.sample()) continue;
      return rule.fault;
    }
    return undefined;
  };

  /** Sends the request upstream; `answer` false swallows the response (drop-response). */
  const forward = (
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    record: ProxyRecord,
    answer: boolean,
  ): Promise<void> =>
    new Promise<void>((resolve) => {
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: forwardedHeaders(req),
        },
        (upRes) => {
          record.upstreamStatus = upRes.statusCode;
          const chunks: Buffer[] = [];
          upRes.on('data', (chunk: Buffer) => chunks.push(chunk));
          upRes.on('end', () => {
            if (answer && !res.destroyed) {
              res.writeHead(upRes.statusCode ?? 502, upRes.headers);
              res.end(Buffer.concat(chunks));
            } else {
              req.socket.destroy();
            }
            resolve();
          });
          upRes.on('error', () => {
            req.socket.destroy();
            resolve();
          });
        },
      );
      upstream.on('error', () => {
        req.socket.destroy();
        resolve();
      });
      upstream.end(body);
    });

  const readBody = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks)));
      // A client that gives up mid-body still gets its partial request judged by the rules.
      req.on('error', () => resolve(Buffer.concat(chunks)));
    });

  const server: Server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const { key, query } = describeTarget(req.url ?? '/');
    const fault = decide(method, key, query);
    const record: ProxyRecord = {
      method,
      key,
      query,
      action: fault?.kind ?? 'forward',
      bodyReceived: false,
    };
    records.push(record);
    if (fault?.kind === 'reset-before') {
      req.socket.resetAndDestroy();
      return;
    }
    track(
      readBody(req).then(async (body) => {
        record.bodyReceived = !req.aborted && req.complete;
        if (fault?.kind === 'error') {
          const text = errorDocument(fault.code);
          res.writeHead(fault.status, {
            'content-type': 'application/xml',
            'content-length': method === 'HEAD' ? '0' : String(Buffer.byteLength(text)),
          });
          res.end(method === 'HEAD' ? undefined : text);
          return;
        }
        if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
        await forward(req, body, res, record, fault?.kind !== 'drop-response');
      }),
    );
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client reset while we still write to it must not crash the test process.
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const idle = async (): Promise<void> => {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  };
  return {
    url: `http://127.0.0.1:${port}`,
    records,
    setRules(next) {
      rules = next;
      seen = new Map();
    },
    idle,
    async close() {
      await idle();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
