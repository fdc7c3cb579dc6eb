/**
 * The view's HTTP handler: security headers on every answer, the Host/Origin guard and the
 * session log-in before anything else, then one route per page. Pages are rendered on the
 * server from the engine's read API; the only script is `/assets/view.js`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DomainError,
  isDomainError,
  type NotebookService,
  type ObjectStore,
  previewApproval,
  proposalDiffs,
  rejectProposal,
  requireProposal,
} from '@slivingdoc/engine';
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
import { type PageFrame, page } from './pages/layout';
import {
  type DecisionControl,
  type DecisionOutcome,
  proposalContent,
  proposalsContent,
} from './pages/proposals';
import { publicationContent, type RevertControl, type RevertOutcome } from './pages/publication';
import { confirmedApproval, isPerson, type ReviewBoard, ReviewWatch, underReview } from './review';
import { type Session, Sessions, sameSecret, sessionCookie } from './session';

/** Where the listener is, for the Host and Origin checks (known once it listens). */
export interface ListenAddress {
  host: string;
  port: number;
}

/** What the view needs from its process. */
export interface ViewOptions {
  /** The notebook service; the view reads, reverts and approves through its own directory. */
  service: NotebookService;
  /** The notebook's store: its proposals and review setting (docs/review.md). */
  store: ObjectStore;
  /** Concurrent additions, as the notebook merges them (the approval preview): default `keep`. */
  mergeAdditions?: 'keep' | 'conflict';
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
      version: '',
      pending: undefined,
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
  const review = new ReviewWatch(options.store);
  /** The board, or undefined while the store cannot be read (pages still render). */
  const board = (): Promise<ReviewBoard | undefined> => review.board().catch(() => undefined);
  /** What a page shows, as the live poll's ETag names it. */
  const versionOf = (generation: number, shown: ReviewBoard | undefined) =>
    `g${generation}.p${shown?.version ?? '-'}`;
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
    section: PageFrame['section'],
    content: SafeHtml,
    status = 200,
  ): Promise<void> {
    const [generation, shown] = await Promise.all([accepted(), board()]);
    send(
      res,
      status,
      'text/html; charset=utf-8',
      page({
        title,
        section,
        generation,
        version: versionOf(generation, shown),
        pending: shown?.pending,
        live: true,
        content,
      }),
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
    const shown = await board();
    await render(
      res,
      'History',
      'history',
      historyContent(history, { ...query, path: query.path || undefined }, (message) =>
        shown === undefined ? undefined : confirmedApproval(shown, message),
      ),
    );
  }

  function revertControl(session: Session, shown: ReviewBoard | undefined): RevertControl {
    // A reader process (store credentials that can only read) offers no revert to anyone.
    if (!mayRevert(session.grant) || service.commitsRefused !== undefined)
      return { kind: 'read-only' };
    return revertBypassesReview(session, shown)
      ? { kind: 'under-review' }
      : { kind: 'form', csrf: session.csrf };
  }

  /**
   * Under review an agent's token may not revert: a revert publishes at once and would bypass
   * the queue. A person's session may. A board that cannot be read counts as review (fail closed).
   */
  function revertBypassesReview(session: Session, shown: ReviewBoard | undefined): boolean {
    if (isPerson(session.grant)) return false;
    return shown === undefined || underReview(shown, session.grant);
  }

  async function publicationPage(
    res: ServerResponse,
    session: Session,
    generation: number,
    outcome?: RevertOutcome,
    revertedFrom?: number,
  ): Promise<void> {
    const [publication, shown] = await Promise.all([service.publication({ generation }), board()]);
    await render(
      res,
      `Generation ${generation}`,
      'other',
      publicationContent(
        publication,
        revertControl(session, shown),
        outcome,
        revertedFrom,
        (message) => (shown === undefined ? undefined : confirmedApproval(shown, message)),
      ),
      outcome === undefined ? 200 : 409,
    );
  }

  /**
   * The fields of a state-changing form, or undefined once refused: the body within the
   * listeners' limit (413 with a lingering close beyond it), an Origin present (the guard
   * checked it names the view), and the session's CSRF token (compared in constant time).
   */
  async function formOf(
    req: IncomingMessage,
    res: ServerResponse,
    session: Session,
  ): Promise<URLSearchParams | undefined> {
    if (req.headers.origin === undefined) {
      messagePage(res, 403, 'Refused', 'A state-changing request must come from the view itself.');
      return undefined;
    }
    const body = await readBody(req, res);
    if (!body.ok) {
      messagePage(res, body.status, 'Refused', body.reason);
      return undefined;
    }
    const form = new URLSearchParams(body.body.toString('utf8'));
    if (!sameSecret(form.get('csrf') ?? '', session.csrf)) {
      messagePage(
        res,
        403,
        'Refused',
        'The form is stale or forged (CSRF check failed): reload the page.',
      );
      return undefined;
    }
    return form;
  }

  async function revert(
    req: IncomingMessage,
    res: ServerResponse,
    session: Session,
    generation: number,
  ) {
    if ((await formOf(req, res, session)) === undefined) return;
    if (!mayRevert(session.grant))
      return messagePage(res, 403, 'Refused', 'This token may only read the notebook.');
    if (service.commitsRefused === 'store')
      return messagePage(
        res,
        403,
        'Refused',
        'This server’s store credentials can only read the notebook.',
      );
    review.invalidate();
    if (revertBypassesReview(session, await board()))
      return messagePage(
        res,
        403,
        'Refused',
        'The notebook is under review: an agent’s token cannot revert, because a revert would publish without a person’s approval. A person’s session (the token slivingdoc view printed, or a --reviewer token) can.',
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

  function decisionControl(session: Session): DecisionControl {
    if (!isPerson(session.grant)) return { kind: 'not-a-person' };
    if (service.commitsRefused === 'store') return { kind: 'read-only-store' };
    return { kind: 'form', csrf: session.csrf };
  }

  /** The generation (as `log` numbers it) of the publication that approved `id` at `revision`. */
  async function approvalPublication(
    actor: string,
    id: string,
    revision: number,
  ): Promise<number | undefined> {
    const trailer = `\nProposal: ${id} revision ${revision}`;
    const { publications } = await service.history({ limit: 200, actor });
    return publications.find((p) => p.message.endsWith(trailer))?.generation;
  }

  async function proposalPage(
    res: ServerResponse,
    session: Session,
    id: string,
    outcome?: DecisionOutcome,
    status = 200,
  ): Promise<void> {
    const { record } = await requireProposal(options.store, id);
    let preview:
      | { generation: number; outcome: Awaited<ReturnType<typeof previewApproval>> }
      | undefined;
    if (record.state === 'open') {
      const generation = await accepted();
      const head = await service.files(generation === 0 ? {} : { generation });
      const outcomeAtHead = await previewApproval(
        record,
        {
          paths: head.files,
          read: async (file) => (await service.readFile({ file, generation })).content,
        },
        options.mergeAdditions,
      );
      preview = { generation, outcome: outcomeAtHead };
    }
    const decision = record.decision;
    const published =
      record.state === 'approved' && decision !== undefined
        ? await approvalPublication(record.actor, record.id, decision.revision)
        : undefined;
    await render(
      res,
      `Proposal ${record.id}`,
      'proposals',
      proposalContent({
        record,
        diffs: proposalDiffs(record),
        preview,
        published,
        control: decisionControl(session),
        outcome,
      }),
      status,
    );
  }

  async function proposalsPage(res: ServerResponse): Promise<void> {
    const shown = await review.board();
    const setting = shown.setting;
    const note =
      setting.state === 'invalid' || setting.state === 'unreadable'
        ? html`<div class="alert" role="alert">The notebook's review setting cannot be ${setting.state === 'invalid' ? 'parsed' : 'read'}: agents' commits are refused until a person rewrites it (slivingdoc review set).</div>`
        : html`<p class="meta">Agents' commits under review wait here for a person (docs: slivingdoc review show).</p>`;
    await render(res, 'Proposals', 'proposals', proposalsContent(shown.proposals, note));
  }

  /** A refused decision: the proposal's page with why, or a plain page when there is none. */
  async function refusedDecision(
    res: ServerResponse,
    session: Session,
    id: string,
    error: DomainError,
  ): Promise<void> {
    log.warn({ id, code: error.code, reason: error.reason }, 'view decision refused');
    if (error.code === 'REVIEW' && error.reason === 'PROPOSAL_NOT_FOUND')
      return messagePage(res, 404, 'Not found', error.message);
    const outcome: DecisionOutcome =
      error.code === 'CONTENT_CONFLICT'
        ? { kind: 'conflict', files: error.files ?? [] }
        : { kind: 'error', code: error.code, reason: error.reason, message: error.message };
    return proposalPage(res, session, id, outcome, 409);
  }

  async function decide(
    req: IncomingMessage,
    res: ServerResponse,
    session: Session,
    id: string,
    action: 'approve' | 'reject',
  ): Promise<void> {
    const form = await formOf(req, res, session);
    if (form === undefined) return;
    if (!isPerson(session.grant))
      return messagePage(
        res,
        403,
        'Refused',
        'Only a person’s session approves or rejects: the token slivingdoc view printed, or one made with slivingdoc token add NAME --reviewer. An agent’s token cannot.',
      );
    if (service.commitsRefused === 'store')
      return messagePage(res, 403, 'Refused', 'This server’s store credentials can only read.');
    const revision = wholeNumber(form.get('revision'));
    if (revision === undefined)
      return messagePage(res, 400, 'Bad request', 'The form names no revision: reload the page.');
    const reason = form.get('reason')?.trim() ?? '';
    if (action === 'reject' && (reason === '' || reason.length > 2000))
      return messagePage(
        res,
        400,
        'Bad request',
        'A rejection needs a reason of at most 2,000 characters: the agent reads it.',
      );
    const by = session.grant.name;
    try {
      if (action === 'approve') {
        await service.pull({});
        await service.approve({ id, actor: by, revision });
      } else {
        await rejectProposal(options.store, { id, by, revision, reason });
      }
      review.invalidate();
      log.info({ id, revision, by, action }, 'view decision recorded');
      return redirect(res, `/proposals/${encodeURIComponent(id)}`);
    } catch (error) {
      review.invalidate();
      if (!isDomainError(error)) throw error;
      return refusedDecision(res, session, id, error);
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
      const decision = /^\/proposals\/([^/]+)\/(approve|reject)$/.exec(path);
      if (decision !== null)
        return decide(req, res, session, decision[1]!, decision[2] as 'approve' | 'reject');
      const match = /^\/publications\/([^/]+)\/revert$/.exec(path);
      const generation = wholeNumber(match?.[1]);
      if (generation === undefined) return messagePage(res, 404, 'Not found', 'No such page.');
      return revert(req, res, session, generation);
    }
    if (path === '/api/generation') {
      const [generation, shown] = await Promise.all([accepted(), board()]);
      const version = versionOf(generation, shown);
      const etag = `"${version}"`;
      res.setHeader('ETag', etag);
      if (req.headers['if-none-match'] === etag) {
        res.statusCode = 304;
        return void res.end();
      }
      const answer = { generation, version, pending: shown?.pending ?? null };
      return send(res, 200, 'application/json', `${JSON.stringify(answer)}\n`);
    }
    if (path === '/proposals') return proposalsPage(res);
    const proposal = /^\/proposals\/([^/]+)$/.exec(path);
    if (proposal !== null) return proposalPage(res, session, proposal[1]!);
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
      res.setHeader('Set-Cookie', sessionCookie(sessions.create(token, grant)));
      log.info({ name: grant.name, readOnly: grant.readOnly }, 'view login');
      url.searchParams.delete('token');
      return redirect(res, `${url.pathname}${url.search}`);
    }
    const session = sessions.of(req, options.verify);
    if (session === 'ended')
      return messagePage(
        res,
        401,
        'Not logged in',
        'This session ended: its token was removed from the token file. Log in with a valid token.',
      );
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
      if (
        isDomainError(error) &&
        (error.code === 'INVALID_REQUEST' ||
          (error.code === 'REVIEW' && error.reason === 'PROPOSAL_NOT_FOUND'))
      )
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
