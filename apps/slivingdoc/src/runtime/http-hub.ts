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

/** One live MCP session: a participant with its own directory, actor and rights. */
interface Session {
  /** Set by the transport when it answers the session's initialize. */
  id: string;
  readonly grant: TokenGrant;
  /** The directory's name under the sessions' base (`alice`, `alice+2`). */
  readonly name: string;
  readonly dir: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: NotebookMcpServer;
  readonly duplicateKeys: DuplicateKeyLedger;
  /** POST requests being answered. */
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
  /** Where sessions' directories are made: the workspace root, or the hub's own. */
  sessionsBase: string;
  /** True: a session's directory is removed at its end when it holds nothing unpublished. */
  removeSessionDirs: boolean;
  logging: Logging;
  scrubber: Scrubber;
}

/**
 * The sessions of `serve --listen`: the request guard (Host/Origin, token, body limit,
 * limits), routing by Mcp-Session-Id to each session's SDK transport, session directories,
 * idle expiry and the end of every session (docs/hosts.md, "Over HTTP").
 */
export class SessionHub {
  readonly #init: HubInit;
  readonly #log: Logger;
  readonly #sessions = new Map<string, Session>();
  /** Directory names of live sessions (and of sessions being created). */
  readonly #liveNames = new Set<string>();
  /** Sessions being created, counted against the limit. */
  #opening = 0;
  /** POST requests in progress over all sessions, so shutdown can wait for their answers. */
  readonly #requests = new Set<Promise<void>>();
  /** Sessions whose end (directory settlement) is still running. */
  readonly #ending = new Set<Promise<void>>();
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
    // A session answers only the token that opened it: another token cannot even learn it exists.
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
    if (existing !== undefined) {
      if (existing.active >= this.#init.listen.maxCallsPerSession)
        return this.#refuse(req, res, {
          status: 429,
          reason: 'too many requests in progress in this session',
          headers: { 'Retry-After': '1' },
        });
      // Held from the first byte: a slow body occupies its place like a running call.
      this.#hold(existing, res);
    }
    const body = await readBody(req);
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
    if (session === undefined) {
      if (!isInitialize(parsed))
        return this.#refuse(req, res, {
          status: 400,
          reason: 'Bad Request: Mcp-Session-Id header is required',
        });
      if (this.#sessions.size + this.#opening >= this.#init.listen.maxSessions)
        return this.#refuse(req, res, {
          status: 503,
          reason: 'too many live sessions',
          headers: { 'Retry-After': RETRY_AFTER_SECONDS },
        });
      session = await this.#open(grant);
      this.#hold(session, res);
    }
    markDuplicateKeys(parsed, text, session.duplicateKeys);
    await session.transport.handleRequest(req, res, parsed);
  }

  /** Counts a POST against its session until its response ends (limits, idle, shutdown). */
  #hold(session: Session, res: ServerResponse): void {
    session.active += 1;
    session.lastSeen = Date.now();
    const done = new Promise<void>((resolve) => res.once('close', resolve));
    this.#requests.add(done);
    void done.then(() => {
      session.active -= 1;
      session.lastSeen = Date.now();
      this.#requests.delete(done);
    });
  }

  /** A new session for `grant`: its directory, its participant of the service, its MCP server. */
  async #open(grant: TokenGrant): Promise<Session> {
    this.#opening += 1;
    const name = this.#freeName(grant.name);
    this.#liveNames.add(name);
    try {
      const dir = join(this.#init.sessionsBase, name);
      const participant = await this.#init.service.session({
        notebookDir: dir,
        ...(grant.writable === undefined ? {} : { writable: [...grant.writable] }),
        ...(grant.readOnlyPaths === undefined ? {} : { readOnly: [...grant.readOnlyPaths] }),
        commitRefused: grant.readOnly,
        // The token authenticates its actor, so the review setting's actor rules bind it.
        review: {
          authenticated: true,
          ...(grant.review === undefined ? {} : { floor: grant.review }),
        },
      });
      const duplicateKeys = new DuplicateKeyLedger();
      const server = createMcpServer({
        version: VERSION,
        service: trackInFlight(participant).service,
        logger: this.#init.logging.module('mcp'),
        scrubber: this.#init.scrubber,
        duplicateKeys,
        // The token's name is the actor: a session cannot claim another (docs/hosts.md).
        actor: grant.name,
      });
      const { listen, port } = this.#init;
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableDnsRebindingProtection: true,
        allowedHosts: allowedHostHeaders(listen.host, port),
        allowedOrigins: listen.allowedOrigins,
        onsessioninitialized: (id) => {
          session.id = id;
          this.#sessions.set(id, session);
          this.#log.info({ actor: grant.name, dir }, 'session started');
        },
      });
      const session: Session = {
        id: '',
        grant,
        name,
        dir,
        transport,
        server,
        duplicateKeys,
        active: 0,
        lastSeen: Date.now(),
      };
      server.onclose = () => {
        if (session.id === '' || this.#sessions.get(session.id) !== session) {
          this.#liveNames.delete(name);
          return;
        }
        this.#sessions.delete(session.id);
        const ending = this.#settle(session).finally(() => {
          this.#liveNames.delete(name);
          this.#ending.delete(ending);
        });
        this.#ending.add(ending);
      };
      await server.connect(transport);
      return session;
    } catch (error) {
      this.#liveNames.delete(name);
      throw error;
    } finally {
      this.#opening -= 1;
    }
  }

  /**
   * The directory name of a new session of `actor`: the actor's own name when no live session
   * uses it, else `actor+2`, `actor+3`, … (the lowest free); `+` is never part of a token
   * name, so these never collide with another actor's directory (docs/hosts.md).
   */
  #freeName(actor: string): string {
    if (!this.#liveNames.has(actor)) return actor;
    for (let n = 2; ; n += 1) {
      const name = `${actor}+${n}`;
      if (!this.#liveNames.has(name)) return name;
    }
  }

  /** After a session ends: its directory is removed when that loses nothing (no workspace root). */
  async #settle(session: Session): Promise<void> {
    this.#log.info({ actor: session.grant.name, dir: session.dir }, 'session ended');
    if (!this.#init.removeSessionDirs) return;
    const { service } = this.#init;
    try {
      const changes = await service.localChanges(session.dir);
      const keep = await holdsUnpublished(session.dir, changes).catch(() => true);
      if (keep) {
        this.#log.warn(
          { actor: session.grant.name, dir: session.dir },
          'session directory kept: it holds unpublished edits',
        );
        return;
      }
      for (const dir of changes.managed) await service.forget(dir);
      const { rm } = await import('node:fs/promises');
      await rm(session.dir, { recursive: true, force: true });
    } catch (err) {
      this.#log.warn({ err, dir: session.dir }, 'could not settle the session directory');
    }
  }

  #expireIdle(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      if (session.active === 0 && now - session.lastSeen >= this.#init.listen.idleTimeoutMs) {
        this.#log.info({ actor: session.grant.name }, 'session idle: ending it');
        void session.transport.close();
      }
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

  /** Ends every session and waits for their directories to be settled. */
  async closeAll(): Promise<void> {
    clearInterval(this.#idleTimer);
    await Promise.allSettled([...this.#sessions.values()].map((s) => s.transport.close()));
    await Promise.allSettled([...this.#ending]);
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
