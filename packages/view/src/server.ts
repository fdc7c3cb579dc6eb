/**
 * The view's HTTP handler: security headers on every answer, the Host/Origin guard and the
 * session log-in before anything else, then one route per page. Pages are rendered on the
 * server from the engine's read API; the only script is `/assets/view.js`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDomainError, type NotebookService } from '@slivingdoc/engine';
import {
  checkHostAndOrigin,
  lingerIfUnread,
  listenerOrigins,
  readBody,
  type TokenGrant,
} from '@slivingdoc/http';
import { CLIENT_JS, VIEW_CSS } from './client';
import { html, type SafeHtml } from './html';
import { blameContent } from './pages/blame';
import { emptyPane, filePane, treeNav } from './pages/files';
import { HISTORY_PAGE_SIZE, historyContent } from './pages/history';
import { page } from './pages/layout';
import { publicationContent, type RevertControl, type RevertOutcome } from './pages/publication';
import { type Session, Sessions, sameSecret, sessionCookie } from './session';

/** Where the listener is, for the Host and Origin checks (known once it listens). */
export interface ListenAddress {
  host: string;
  port: number;
}

/** What the view needs from its process. */
export interface ViewOptions {
  /** The notebook service; the view reads and reverts through its own notebook directory. */
  service: NotebookService;
  /** The listener's address (a function: with port 0 it is known only after listening). */
  address: () => ListenAddress;
  /** A login token's grant, or undefined (the token file, and `view`'s fresh token). */
  verify: (token: string) => TokenGrant | undefined;
  /** The process's logger (never given a token). */
  log: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/**
 * The Content-Security-Policy of every answer: nothing but this origin's own script, style and
 * fetches; no plugin, no frame (neither inside nor around the page), no base or form target
 * elsewhere.
 */
export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function secureHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on the view's own
  // form posts, which the Origin check must refuse. Links out carry rel=noreferrer anyway.
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
}

/** An answer; one given before a request's body was read whole closes with a lingering close. */
function send(res: ServerResponse, status: number, type: string, body: string): void {
  lingerIfUnread(res);
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.end(body);
}

/** A page with just a heading and a sentence (refusals and errors). */
function messagePage(
  res: ServerResponse,
  status: number,
  title: string,
  text: SafeHtml | string,
): void {
  send(
    res,
    status,
    'text/html; charset=utf-8',
    page({
      title,
      section: 'other',
      generation: 0,
      live: false,
      content: html`<h1>${title}</h1><p>${text}</p>`,
    }),
  );
}

function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 303;
  res.setHeader('Location', location);
  res.end();
}

/** A notebook path from the rest of a URL path (`a%20b/c.md` → `a b/c.md`). */
function notebookPath(rest: string): string | undefined {
  try {
    const path = rest.split('/').map(decodeURIComponent).join('/');
    return path === '' ? undefined : path;
  } catch {
    return undefined;
  }
}

function wholeNumber(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || !/^[1-9]\d{0,15}$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Only an unrestricted write token may revert (a revert may touch any file). */
function mayRevert(grant: TokenGrant): boolean {
  return (
    !grant.readOnly &&
    (grant.writable === undefined || grant.writable.length === 0) &&
    (grant.readOnlyPaths === undefined || grant.readOnlyPaths.length === 0)
  );
}

/** Creates the request handler of the view. */
export function createViewHandler(
  options: ViewOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { service, log } = options;
  const sessions = new Sessions();
  // One `current` read serves every open page polling within the same half second.
  let generationCache: { at: number; value: Promise<number> } | undefined;
  const accepted = (): Promise<number> => {
    const now = Date.now();
    if (generationCache === undefined || now - generationCache.at > 500) {
      const value = service.acceptedGeneration();
      value.catch(() => {
        generationCache = undefined;
      });
      generationCache = { at: now, value };
    }
    return generationCache.value;
  };

  async function render(
    res: ServerResponse,
    title: string,
    section: 'files' | 'history' | 'other',
    content: SafeHtml,
    status = 200,
  ): Promise<void> {
    send(
      res,
      status,
      'text/html; charset=utf-8',
      page({ title, section, generation: await accepted(), live: true, content }),
    );
  }

  async function filesPage(res: ServerResponse, url: URL, file: string | undefined): Promise<void> {
    const at = wholeNumber(url.searchParams.get('at'));
    if (url.searchParams.has('at') && at === undefined)
      return messagePage(res, 400, 'Bad request', 'at= must be a generation (a whole number ≥ 1).');
    const tree = await service.files(at === undefined ? {} : { generation: at });
    const shown = file ?? tree.files.find((path) => /^(readme|index)\.(md|markdown)$/i.test(path));
    const pane =
      shown === undefined
        ? emptyPane(tree.files)
        : filePane(
            await service.readFile({
              file: shown,
              ...(at === undefined ? {} : { generation: at }),
            }),
            at,
          );
    await render(
      res,
      shown ?? 'Notebook',
      'files',
      html`<div class="layout">${treeNav(tree.files, shown, at)}${pane}</div>`,
    );
  }

  async function historyPage(res: ServerResponse, url: URL): Promise<void> {
    const text = (name: string) => {
      const value = url.searchParams.get(name)?.trim();
      return value === undefined || value === '' ? undefined : value;
    };
    const pageNumber = url.searchParams.has('page') ? wholeNumber(url.searchParams.get('page')) : 1;
    if (pageNumber === undefined)
      return messagePage(res, 400, 'Bad request', 'page= must be a whole number ≥ 1.');
    const query = {
      actor: text('actor'),
      path: text('path')?.replace(/^\/+|\/+$/g, ''),
      page: pageNumber,
    };
    const history = await service.history({
      limit: HISTORY_PAGE_SIZE,
      offset: (pageNumber - 1) * HISTORY_PAGE_SIZE,
      ...(query.actor === undefined ? {} : { actor: query.actor }),
      ...(query.path === undefined || query.path === '' ? {} : { file: query.path }),
    });
    await render(
      res,
      'History',
      'history',
      historyContent(history, { ...query, path: query.path || undefined }),
    );
  }

  function revertControl(session: Session): RevertControl {
    // A reader process (store credentials that can only read) offers no revert to anyone.
    return mayRevert(session.grant) && service.commitsRefused === undefined
      ? { kind: 'form', csrf: session.csrf }
      : { kind: 'read-only' };
  }

  async function publicationPage(
    res: ServerResponse,
    session: Session,
    generation: number,
    outcome?: RevertOutcome,
    revertedFrom?: number,
  ): Promise<void> {
    const publication = await service.publication({ generation });
    await render(
      res,
      `Generation ${generation}`,
      'other',
      publicationContent(publication, revertControl(session), outcome, revertedFrom),
      outcome === undefined ? 200 : 409,
    );
  }

  async function revert(
    req: IncomingMessage,
    res: ServerResponse,
    session: Session,
    generation: number,
  ) {
    // CSRF: the Origin (checked by the guard) must be present, and the form's token must match.
    if (req.headers.origin === undefined)
      return messagePage(
        res,
        403,
        'Refused',
        'A state-changing request must come from the view itself.',
      );
    const body = await readBody(req, res);
    if (!body.ok) return messagePage(res, body.status, 'Refused', body.reason);
    const csrf = new URLSearchParams(body.body.toString('utf8')).get('csrf') ?? '';
    if (!sameSecret(csrf, session.csrf))
      return messagePage(
        res,
        403,
        'Refused',
        'The form is stale or forged (CSRF check failed): reload the page.',
      );
    if (!mayRevert(session.grant))
      return messagePage(res, 403, 'Refused', 'This token may only read the notebook.');
    if (service.commitsRefused === 'store')
      return messagePage(
        res,
        403,
        'Refused',
        'This server’s store credentials can only read the notebook.',
      );
    try {
      await service.pull({});
      const actor = session.grant.name;
      await service.revert({ generation, actor, onConflict: 'refuse' });
      // The answer's generation counts the store's manifests; pages number publications as
      // `log` does, so the revert's own number is read back (the actor's latest publication).
      const [published] = (await service.history({ limit: 1, actor })).publications;
      log.info({ generation, published: published?.generation, actor }, 'view revert published');
      return redirect(
        res,
        published === undefined
          ? '/history'
          : `/publications/${published.generation}?reverted=${generation}`,
      );
    } catch (error) {
      if (!isDomainError(error)) throw error;
      log.warn({ generation, code: error.code, reason: error.reason }, 'view revert refused');
      const outcome: RevertOutcome =
        error.code === 'CONTENT_CONFLICT'
          ? { kind: 'conflict', files: error.files ?? [] }
          : { kind: 'error', code: error.code, reason: error.reason, message: error.message };
      return publicationPage(res, session, generation, outcome);
    }
  }

  async function route(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    session: Session,
  ): Promise<void> {
    const path = url.pathname;
    if (req.method === 'POST') {
      const match = /^\/publications\/([^/]+)\/revert$/.exec(path);
      const generation = wholeNumber(match?.[1]);
      if (generation === undefined) return messagePage(res, 404, 'Not found', 'No such page.');
      return revert(req, res, session, generation);
    }
    if (path === '/api/generation') {
      const generation = await accepted();
      const etag = `"g${generation}"`;
      res.setHeader('ETag', etag);
      if (req.headers['if-none-match'] === etag) {
        res.statusCode = 304;
        return void res.end();
      }
      return send(res, 200, 'application/json', `${JSON.stringify({ generation })}\n`);
    }
    if (path === '/') return filesPage(res, url, undefined);
    if (path === '/history') return historyPage(res, url);
    if (path.startsWith('/files/')) {
      const file = notebookPath(path.slice('/files/'.length));
      if (file !== undefined) return filesPage(res, url, file);
    }
    if (path.startsWith('/blame/')) {
      const file = notebookPath(path.slice('/blame/'.length));
      const at = wholeNumber(url.searchParams.get('at'));
      if (file !== undefined) {
        const blame = await service.blame({
          file,
          ...(at === undefined ? {} : { generation: at }),
        });
        return render(res, `Blame ${file}`, 'other', blameContent(blame));
      }
    }
    const publication = /^\/publications\/([^/]+)$/.exec(path);
    if (publication !== null) {
      const generation = wholeNumber(publication[1]);
      const reverted = wholeNumber(url.searchParams.get('reverted'));
      if (generation !== undefined)
        return publicationPage(res, session, generation, undefined, reverted);
    }
    return messagePage(res, 404, 'Not found', 'No such page.');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    secureHeaders(res);
    const { host, port } = options.address();
    const guard = checkHostAndOrigin(req, {
      listenHost: host,
      port,
      allowedOrigins: listenerOrigins(host, port),
    });
    if (!guard.ok) {
      log.warn({ status: guard.status, reason: guard.reason }, 'view request refused');
      return messagePage(res, guard.status, 'Refused', guard.reason);
    }
    const url = new URL(req.url ?? '/', 'http://view.invalid');
    if (req.method !== 'GET' && req.method !== 'POST') {
      res.setHeader('Allow', 'GET, POST');
      return messagePage(res, 405, 'Method not allowed', 'Only GET and POST.');
    }
    if (req.method === 'GET' && url.pathname === '/assets/view.js')
      return send(res, 200, 'text/javascript; charset=utf-8', CLIENT_JS);
    if (req.method === 'GET' && url.pathname === '/assets/view.css')
      return send(res, 200, 'text/css; charset=utf-8', VIEW_CSS);
    const token = url.searchParams.get('token');
    if (req.method === 'GET' && token !== null) {
      const grant = options.verify(token);
      if (grant === undefined) {
        log.warn({ path: url.pathname }, 'view login refused: unknown token');
        return messagePage(res, 401, 'Not logged in', 'That login token is not valid.');
      }
      res.setHeader('Set-Cookie', sessionCookie(sessions.create(grant)));
      log.info({ name: grant.name, readOnly: grant.readOnly }, 'view login');
      url.searchParams.delete('token');
      return redirect(res, `${url.pathname}${url.search}`);
    }
    const session = sessions.of(req);
    if (session === undefined)
      return messagePage(
        res,
        401,
        'Not logged in',
        'Open the address printed when the view started (it ends in ?token=…), or add ?token=<a token from the token file>.',
      );
    try {
      await route(req, res, url, session);
    } catch (error) {
      if (isDomainError(error) && error.code === 'INVALID_REQUEST')
        return messagePage(res, 404, 'Not found', error.message);
      log.warn({ err: error, path: url.pathname }, 'view page failed');
      const what = isDomainError(error)
        ? `${error.code} · ${error.reason}`
        : 'an unexpected failure';
      return messagePage(
        res,
        503,
        'Not available',
        `The notebook could not be read (${what}); see the server log.`,
      );
    }
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.warn({ err }, 'view request failed');
      if (!res.headersSent)
        messagePage(res, 500, 'Failed', 'The request failed; see the server log.');
      else res.destroy();
    });
  };
}
