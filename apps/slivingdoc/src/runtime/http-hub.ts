import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { NotebookService } from '@slivingdoc/engine';
import type { Scrubber } from '@slivingdoc/envelope';
import {
  allowedHostHeaders,
  bearerToken,
  checkHostAndOrigin,
  type OpenTokenFile,
  type Refusal,
  readBody,
  type TokenGrant,
  unauthorized,
  writeRefusal,
} from '@slivingdoc/http';
import {
  batchCallsWithDuplicateKeys,
  createMcpServer,
  DuplicateKeyLedger,
  isStatelessRequest,
  type NotebookMcpServer,
  toolCallHasDuplicateKeys,
} from '@slivingdoc/mcp';
import type { Logger } from 'pino';
import type { ListenConfig } from '../config/types';
import type { Logging } from '../logging';
import { VERSION } from '../version';
import { trackInFlight } from './in-flight';
import { holdsUnpublished } from './session-dir';

/** The MCP endpoint's path on the listener. */
export const MCP_PATH = '/mcp';

/** Seconds a client is told to wait after a 503 (session limit, shutdown) or a 429. */
const RETRY_AFTER_SECONDS = '5';

/**
 * Discovery documents (`/.well-known/oauth-…`, `/.well-known/openid-configuration`): all
 * answered 404, so a client such as `mcp-remote` uses the header it was given and never starts
 * a browser sign-in.
 */
const DISCOVERY = /^\/\.well-known\//;

/** One live MCP session: a participant in its token's directory, with the token's rights. */
interface Session {
  /** Set by the transport when it answers the session's initialize. */
  id: string;
  readonly grant: TokenGrant;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: NotebookMcpServer;
  readonly duplicateKeys: DuplicateKeyLedger;
  /** POST requests being answered; 0 is idle (an open GET stream alone is no work). */
  active: number;
  lastSeen: number;
}

/** What the hub is built from. */
export interface HubInit {
  listen: ListenConfig;
  /** The port actually bound (the configured one may be 0). */
  port: number;
  tokens: OpenTokenFile;
  /** The process's one notebook service; each session is a participant of it. */
  service: NotebookService;
  /** Where tokens' directories are: the workspace root, or the hub's own. */
  tokensBase: string;
  /** True: at exit a token's directory is removed when it holds nothing unpublished. */
  removeTokenDirs: boolean;
  logging: Logging;
  scrubber: Scrubber;
}

/**
 * The sessions of `serve --listen`: the request guard (Host/Origin, token, body limit,
 * limits), routing by Mcp-Session-Id to each session's SDK transport, idle expiry and
 * least-recently-used eviction (docs/hosts.md, "Over HTTP"). The token, not the session,
 * owns the directory: every session of token NAME works in `<tokens' base>/NAME`, and a
 * session's end settles nothing there.
 */
export class SessionHub {
  readonly #init: HubInit;
  readonly #log: Logger;
  readonly #sessions = new Map<string, Session>();
  /** Sessions being created, counted against the limit. */
  #opening = 0;
  /** POST requests in progress, by token name (the per-token limit). */
  readonly #tokenCalls = new Map<string, number>();
  /** POST requests in progress over all sessions, so shutdown can wait for their answers. */
  readonly #requests = new Set<Promise<void>>();
  /** Each grant's server for sessionless (2026-07-28) requests. */
  readonly #stateless = new WeakMap<
    TokenGrant,
    Promise<{ server: NotebookMcpServer; duplicateKeys: DuplicateKeyLedger }>
  >();
  /** Tokens whose directory this hub served, settled at exit. */
  readonly #served = new Set<string>();
  #closing = false;
  readonly #idleTimer: NodeJS.Timeout;

  constructor(init: HubInit) {
    this.#init = init;
    this.#log = init.logging.module('app');
    const every = Math.max(250, Math.min(init.listen.idleTimeoutMs / 4, 30_000));
    this.#idleTimer = setInterval(() => this.#expireIdle(), every);
    this.#idleTimer.unref();
  }

  /** Live sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /** The directory of token `name`: its own name under the tokens' base. */
  tokenDir(name: string): string {
    return join(this.#init.tokensBase, name);
  }

  /** True for the paths the hub answers itself (`/mcp`, discovery documents); the rest is the view's. */
  static owns(pathname: string): boolean {
    return pathname === MCP_PATH || DISCOVERY.test(pathname);
  }

  /** The listener's request handler. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.#route(req, res).catch((err: unknown) => {
      this.#log.error({ err }, 'request failed');
      if (!res.headersSent) writeRefusal(res, { status: 503, reason: 'internal error' });
      else res.end();
    });
  };

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { listen, port, tokens } = this.#init;
    // Host and Origin first: a rebinding page learns nothing, not even whether a token is needed.
    const place = checkHostAndOrigin(req, {
      listenHost: listen.host,
      port,
      allowedOrigins: listen.allowedOrigins,
    });
    if (!place.ok) return this.#refuse(req, res, place);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return this.#refuse(req, res, { status: 404, reason: 'not found' });
    const presented = bearerToken(req);
    const grant = tokens.verify(presented);
    if (grant === undefined) return this.#refuse(req, res, unauthorized(presented));
    // A person's reviewer token never doubles as an agent's credential (docs/review.md).
    if (grant.reviewer === true)
      return this.#refuse(req, res, { status: 403, reason: 'a reviewer token cannot use /mcp' });
    if (this.#closing)
      return this.#refuse(req, res, {
        status: 503,
        reason: 'the server is shutting down',
        headers: { 'Retry-After': RETRY_AFTER_SECONDS },
      });
    const sessionId = req.headers['mcp-session-id'];
    const session = typeof sessionId === 'string' ? this.#sessions.get(sessionId) : undefined;
    // A session answers only the token that opened it: another token cannot even learn it
    // exists. An ended or evicted session is 404, which tells the client to initialize again.
    if (sessionId !== undefined && (session === undefined || session.grant.name !== grant.name))
      return this.#refuse(req, res, { status: 404, reason: 'Session not found' });
    if (req.method === 'POST') return this.#post(req, res, grant, session);
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (session === undefined)
        return this.#refuse(req, res, {
          status: 400,
          reason: 'Bad Request: Mcp-Session-Id header is required',
        });
      session.lastSeen = Date.now();
      await session.transport.handleRequest(req, res);
      return;
    }
    return this.#refuse(req, res, {
      status: 405,
      reason: 'Method not allowed',
      headers: { Allow: 'GET, POST, DELETE' },
    });
  }

  async #post(
    req: IncomingMessage,
    res: ServerResponse,
    grant: TokenGrant,
    existing: Session | undefined,
  ): Promise<void> {
    // Held from the first byte, per token: a slow body occupies its place like a running call,
    // and one token's flood neither starves another token nor makes its busy sessions idle.
    if ((this.#tokenCalls.get(grant.name) ?? 0) >= this.#init.listen.maxCallsPerToken)
      return this.#refuse(req, res, {
        status: 429,
        reason: 'too many requests of this token in progress',
        headers: { 'Retry-After': '1' },
      });
    const done = this.#hold(grant, res);
    if (existing !== undefined) this.#busy(existing, done);
    const body = await readBody(req, res);
    if (!body.ok) return this.#refuse(req, res, body);
    const text = body.body.toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // The SDK transport's own answer to a body that is not JSON.
      return this.#refuse(req, res, {
        status: 400,
        code: -32700,
        reason: 'Parse error: Invalid JSON',
      });
    }
    let session = existing;
    if (session === undefined && isStateless(parsed))
      return this.#answerStateless(res, grant, parsed, text);
    if (session === undefined) {
      if (!isInitialize(parsed))
        return this.#refuse(req, res, {
          status: 400,
          reason: 'Bad Request: Mcp-Session-Id header is required',
        });
      if (!this.#makeRoom())
        return this.#refuse(req, res, {
          status: 503,
          reason: 'every live session has a request in progress',
          headers: { 'Retry-After': RETRY_AFTER_SECONDS },
        });
      session = await this.#open(grant);
      this.#busy(session, done);
    }
    markDuplicateKeys(parsed, text, session.duplicateKeys);
    await session.transport.handleRequest(req, res, parsed);
  }

  /** Counts a POST against its token until its response ends; resolves then. */
  #hold(grant: TokenGrant, res: ServerResponse): Promise<void> {
    const name = grant.name;
    this.#tokenCalls.set(name, (this.#tokenCalls.get(name) ?? 0) + 1);
    // Released when the answer is sent: a refusal's lingering close does not hold the place.
    const done = new Promise<void>((resolve) => {
      res.once('finish', resolve);
      res.once('close', resolve);
    });
    this.#requests.add(done);
    void done.then(() => {
      const left = (this.#tokenCalls.get(name) ?? 1) - 1;
      if (left === 0) this.#tokenCalls.delete(name);
      else this.#tokenCalls.set(name, left);
      this.#requests.delete(done);
    });
    return done;
  }

  /** Marks `session` busy until `done` (it is not idle, so neither expired nor evicted). */
  #busy(session: Session, done: Promise<void>): void {
    session.active += 1;
    session.lastSeen = Date.now();
    void done.then(() => {
      session.active -= 1;
      session.lastSeen = Date.now();
    });
  }

  /**
   * Room for one more session: true when under the limit, else the least recently used idle
   * session is ended (its next request is 404) and true; false when every session is busy.
   */
  #makeRoom(): boolean {
    if (this.#sessions.size + this.#opening < this.#init.listen.maxSessions) return true;
    let oldest: Session | undefined;
    for (const session of this.#sessions.values())
      if (session.active === 0 && (oldest === undefined || session.lastSeen < oldest.lastSeen))
        oldest = session;
    if (oldest === undefined) return false;
    this.#end(oldest, 'session evicted: the least recently used idle one');
    return true;
  }

  /** Ends a session now: it leaves the table at once, its transport closes behind. */
  #end(session: Session, why: string): void {
    this.#sessions.delete(session.id);
    this.#log.debug({ actor: session.grant.name }, why);
    void session.transport.close();
  }

  /**
   * A sessionless 2026-07-28 message: a request is answered with one JSON response by the
   * token's own server (the same tools, results and records as a session's), a notification
   * with 202. Closing the connection cancels the call.
   */
  async #answerStateless(
    res: ServerResponse,
    grant: TokenGrant,
    parsed: { id?: unknown; method: string },
    text: string,
  ): Promise<void> {
    if (parsed.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const { server, duplicateKeys } = await this.#statelessServer(grant);
    markDuplicateKeys(parsed, text, duplicateKeys);
    const cancel = new AbortController();
    res.once('close', () => cancel.abort());
    const response = await server.answer(
      parsed as Parameters<NotebookMcpServer['answer']>[0],
      cancel.signal,
    );
    if (cancel.signal.aborted) return;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(response));
  }

  /** The server that answers a token's sessionless requests, made at its first one. */
  #statelessServer(
    grant: TokenGrant,
  ): Promise<{ server: NotebookMcpServer; duplicateKeys: DuplicateKeyLedger }> {
    // By grant: a token re-added with other rights is another grant, and gets another server.
    let made = this.#stateless.get(grant);
    if (made === undefined) {
      const duplicateKeys = new DuplicateKeyLedger();
      made = this.#server(grant, duplicateKeys).then((server) => ({ server, duplicateKeys }));
      made.catch(() => this.#stateless.delete(grant));
      this.#stateless.set(grant, made);
    }
    return made;
  }

  /** The MCP server of one of `grant`'s clients: a participant confined to the token's directory. */
  async #server(grant: TokenGrant, duplicateKeys: DuplicateKeyLedger): Promise<NotebookMcpServer> {
    const participant = await this.#init.service.session({
      notebookDir: this.tokenDir(grant.name),
      confined: true,
      ...(grant.writable === undefined ? {} : { writable: [...grant.writable] }),
      ...(grant.readOnlyPaths === undefined ? {} : { readOnly: [...grant.readOnlyPaths] }),
      commitRefused: grant.readOnly,
      // The token authenticates its actor, so the review setting's actor rules bind it.
      review: {
        authenticated: true,
        ...(grant.review === undefined ? {} : { floor: grant.review }),
      },
    });
    this.#served.add(grant.name);
    return createMcpServer({
      version: VERSION,
      service: trackInFlight(participant).service,
      logger: this.#init.logging.module('mcp'),
      scrubber: this.#init.scrubber,
      duplicateKeys,
      // The token's name is the actor: a client cannot claim another (docs/hosts.md).
      actor: grant.name,
    });
  }

  /** A new session for `grant`: a participant in its token's directory, its MCP server. */
  async #open(grant: TokenGrant): Promise<Session> {
    this.#opening += 1;
    try {
      const duplicateKeys = new DuplicateKeyLedger();
      const server = await this.#server(grant, duplicateKeys);
      const { listen, port } = this.#init;
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableDnsRebindingProtection: true,
        allowedHosts: allowedHostHeaders(listen.host, port),
        allowedOrigins: listen.allowedOrigins,
        onsessioninitialized: (id) => {
          session.id = id;
          this.#sessions.set(id, session);
          this.#log.debug({ actor: grant.name }, 'session started');
        },
      });
      const session: Session = {
        id: '',
        grant,
        transport,
        server,
        duplicateKeys,
        active: 0,
        lastSeen: Date.now(),
      };
      server.onclose = () => {
        // A session's end settles nothing: the directory is the token's, not the session's.
        if (this.#sessions.get(session.id) === session) {
          this.#sessions.delete(session.id);
          this.#log.debug({ actor: grant.name }, 'session ended');
        }
      };
      await server.connect(transport);
      return session;
    } finally {
      this.#opening -= 1;
    }
  }

  /**
   * At exit, without a workspace root: each served token's directory is removed when that
   * loses nothing, and kept (named at warn) when it holds unpublished edits.
   */
  async #settle(name: string): Promise<void> {
    const dir = this.tokenDir(name);
    const { service } = this.#init;
    try {
      const changes = await service.localChanges(dir);
      const keep = await holdsUnpublished(dir, changes).catch(() => true);
      if (keep) {
        this.#log.warn({ actor: name, dir }, 'token directory kept: it holds unpublished edits');
        return;
      }
      for (const managed of changes.managed) await service.forget(managed);
      const { rm } = await import('node:fs/promises');
      await rm(dir, { recursive: true, force: true });
    } catch (err) {
      this.#log.warn({ err, dir }, 'could not settle the token directory');
    }
  }

  #expireIdle(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      if (session.active === 0 && now - session.lastSeen >= this.#init.listen.idleTimeoutMs)
        this.#end(session, 'session idle: ending it');
    }
  }

  /** Shutdown, first step: every new request is answered 503. */
  stopAccepting(): void {
    this.#closing = true;
  }

  /** Resolves true once every POST in progress was answered, false when `deadline` came first. */
  async drain(deadline: Promise<void>): Promise<boolean> {
    const answered = Promise.allSettled([...this.#requests]).then(() => true);
    return Promise.race([answered, deadline.then(() => false)]);
  }

  /** Ends every session, then settles the served tokens' directories (without a workspace root). */
  async closeAll(): Promise<void> {
    clearInterval(this.#idleTimer);
    await Promise.allSettled([...this.#sessions.values()].map((s) => s.transport.close()));
    if (this.#init.removeTokenDirs) for (const name of this.#served) await this.#settle(name);
  }

  /** Answers a refusal and logs it once at warn, without the token. */
  #refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal): void {
    this.#log.warn(
      { status: refusal.status, reason: refusal.reason, method: req.method, url: req.url },
      'request refused',
    );
    writeRefusal(res, refusal);
  }
}

/** True for one JSON-RPC message of the stateless revision (2026-07-28 in its `_meta`). */
function isStateless(message: unknown): message is { id?: unknown; method: string } {
  return (
    typeof message === 'object' &&
    message !== null &&
    !Array.isArray(message) &&
    typeof (message as { method?: unknown }).method === 'string' &&
    isStatelessRequest((message as { params?: unknown }).params)
  );
}

/** True for one JSON-RPC `initialize` request (alone: the SDK refuses it inside a batch). */
function isInitialize(message: unknown): boolean {
  return (
    typeof message === 'object' &&
    message !== null &&
    !Array.isArray(message) &&
    (message as { method?: unknown }).method === 'initialize'
  );
}

/** Marks the `tools/call` requests whose arguments repeat a key (contract §2), as stdio does. */
function markDuplicateKeys(parsed: unknown, text: string, ledger: DuplicateKeyLedger): void {
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  if (!calls.some((m) => (m as { method?: unknown })?.method === 'tools/call')) return;
  if (Array.isArray(parsed)) {
    for (const index of batchCallsWithDuplicateKeys(text)) {
      const id = (parsed[index] as { id?: unknown })?.id;
      if (typeof id === 'string' || typeof id === 'number') ledger.mark(id);
    }
    return;
  }
  const id = (parsed as { id?: unknown }).id;
  if ((typeof id === 'string' || typeof id === 'number') && toolCallHasDuplicateKeys(text))
    ledger.mark(id);
}
