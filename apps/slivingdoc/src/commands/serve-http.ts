import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Scrubber } from '@slivingdoc/envelope';
import {
  type Listener,
  type OpenTokenFile,
  openTokenFile,
  PublicBindError,
  startListener,
  TokenFileError,
  writeRefusal,
} from '@slivingdoc/http';
import type { ObjectStore } from '@slivingdoc/store';
import { configuration, startup } from '../config/refusal';
import type { AppConfig, ListenConfig } from '../config/types';
import type { Logging } from '../logging';
import { asRefusal, refuse } from '../runtime/refuse';
import { type Roots, serverRoots } from '../runtime/roots';
import { holdsUnpublished, settleSessionDir } from '../runtime/session-dir';
import { createShutdown, stopRequests } from '../runtime/shutdown';
import { openStore, probeStore } from '../runtime/store';
import { tokenFilePath } from '../runtime/token-file';
import { VERSION } from '../version';

/**
 * `slivingdoc serve --listen HOST:PORT`: MCP over Streamable HTTP at `/mcp`, every session a
 * participant of one notebook service (docs/hosts.md, "Over HTTP"). Refuses to start without
 * a token, on a public address without `--listen-public`, or with `--actor` (each token's name
 * is its sessions' actor). Resolves with the exit code once the process has shut down.
 */
export async function runServeHttp(config: AppConfig, listen: ListenConfig): Promise<number> {
  if (config.actor !== undefined)
    return refuse(
      configuration(
        "--actor does not apply with --listen: each token's name is the actor of its sessions",
      ).toRefusal(),
    );
  const tokenFile = tokenFilePath(listen.tokenFile);
  let tokens: OpenTokenFile;
  try {
    tokens = openTokenFile(tokenFile);
  } catch (error) {
    if (error instanceof TokenFileError) return refuse(configuration(error.message).toRefusal());
    throw error;
  }
  if (tokens.size() === 0)
    return refuse(
      configuration(
        `--listen needs at least one token, and ${tokenFile} holds none: add one with "slivingdoc token add NAME"`,
      ).toRefusal(),
    );

  let roots: Roots;
  try {
    roots = await serverRoots(config);
  } catch (error) {
    return refuse(asRefusal(error));
  }
  const stops = stopRequests();
  const { processLogging } = await import('../runtime/process-logging');
  const { scrubber, logging } = processLogging(roots.privateRoot);
  const log = logging.module('app');

  let started: Awaited<ReturnType<typeof start>>;
  try {
    started = await start(config, listen, roots, tokens, logging, scrubber);
  } catch (error) {
    if (roots.session) await settleSessionDir(roots.session, false, undefined);
    if (error instanceof PublicBindError)
      return refuse(configuration(`${error.message} (--listen-public)`).toRefusal(), scrubber);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      return refuse(
        startup(`cannot listen on ${listen.host}:${listen.port} (${code})`).toRefusal(),
        scrubber,
      );
    return refuse(asRefusal(error), scrubber);
  }
  const { hub, listener, service, store } = started;
  const url = `${listener.url}/mcp`;
  log.info(
    { version: VERSION, store: config.store.kind, url, maxSessions: listen.maxSessions },
    'serving MCP over Streamable HTTP',
  );
  // stdout is free over HTTP: plain words for the person who started the hub; logs stay on stderr.
  process.stdout.write(banner(listener.url));
  void warnLeftovers(roots.notebookDir, service, log);

  let keepSession = false;
  const shutdown = createShutdown(
    {
      stopAccepting: async () => hub.stopAccepting(),
      drain: (deadline) => hub.drain(deadline),
      close: async () => {
        await hub.closeAll();
        await listener.close(1000);
        if (roots.session)
          keepSession = await holdsUnpublished(
            roots.notebookDir,
            await service.localChanges(),
          ).catch(() => true);
        await service.close();
        await store.close?.();
        tokens.close();
      },
    },
    log,
  );
  await shutdown(await stops.first);
  if (roots.session) await settleSessionDir(roots.session, keepSession, log);
  process.exit(0);
}

async function start(
  config: AppConfig,
  listen: ListenConfig,
  roots: Roots,
  tokens: OpenTokenFile,
  logging: Logging,
  scrubber: Scrubber,
) {
  const store = await openStore(config.store);
  const { readOnly } = await probeStore(store);
  const [{ startService }, { SessionHub }] = await Promise.all([
    import('../runtime/service'),
    import('../runtime/http-hub'),
  ]);
  // Every session's directory uses one object database (docs/engine.md, "One object database
  // per store"); a stdio server serves one directory and keeps its own.
  const service = await startService(config, roots, store, logging, {
    sharedObjects: true,
    readOnlyStore: readOnly,
  });
  let hub: InstanceType<typeof SessionHub> | undefined;
  const listener: Listener = await startListener(
    {
      host: listen.host,
      port: listen.port,
      allowPublic: listen.public,
      onWarning: (message) => logging.module('app').warn({ host: listen.host }, message),
    },
    (req, res) => {
      // The hub needs the bound port; a request in the instant before it exists waits for nothing.
      if (hub === undefined)
        writeRefusal(res, {
          status: 503,
          reason: 'the server is starting',
          headers: { 'Retry-After': '1' },
        });
      else if (SessionHub.owns(new URL(req.url ?? '/', 'http://x').pathname)) hub.handle(req, res);
      else view(req, res);
    },
  );
  const view = await viewHandler(service, store, config, roots, tokens, logging, () => ({
    host: listen.host,
    port: listener.port,
  }));
  hub = new SessionHub({
    listen,
    port: listener.port,
    tokens,
    service,
    tokensBase: roots.notebookDir,
    removeTokenDirs: roots.session !== undefined,
    logging,
    scrubber,
  });
  return { hub, listener, service, store };
}

/**
 * What a person starting the hub reads on stdout (docs/hosts.md, "Over HTTP"): where agents
 * connect, the line that adds the hub to Claude Code, where the view is and where tokens come from.
 */
export function banner(base: string): string {
  const url = `${base}/mcp`;
  return [
    `slivingdoc hub: MCP for many agents at ${url}`,
    `  add it to Claude Code:  claude mcp add --transport http slivingdoc ${url} --header "Authorization: Bearer <token>"`,
    `  the web view:           ${base}/?token=<token>`,
    `  tokens:                 slivingdoc token add NAME prints one; NAME is the agent's actor and directory`,
    '',
  ].join('\n');
}

/**
 * Warns once about directories an earlier release made for a second live session of one
 * token (`NAME+2`, …) that still hold unpublished edits. They are never deleted: the warning
 * names them so a person can publish them (`slivingdoc commit DIR -m …`).
 */
async function warnLeftovers(
  base: string,
  service: { localChanges(under?: string): Promise<{ managed: string[]; unpublished: string[] }> },
  log: { warn(record: object, msg: string): void },
): Promise<void> {
  try {
    const { leftoverSessionDirs } = await import('../runtime/leftover-dirs');
    const dirs = await leftoverSessionDirs(base, service);
    if (dirs.length > 0)
      log.warn(
        { dirs },
        'directories of an earlier release (NAME+N) hold unpublished edits: publish them with "slivingdoc commit DIR -m …"; they are never deleted',
      );
  } catch (err) {
    log.warn({ err }, 'could not look for leftover NAME+N directories');
  }
}

/**
 * The web view beside `/mcp` (docs/view.md): every other path. It reads and reverts through a
 * participant of its own, `.view` below the tokens' base: outside every token's directory, so
 * no token's `path` reaches it. Pulled on the first view request; a token of the token file
 * logs in (its name is the actor of its reverts).
 */
async function viewHandler(
  service: Awaited<ReturnType<typeof import('../runtime/service').startService>>,
  store: ObjectStore,
  config: AppConfig,
  roots: Roots,
  tokens: OpenTokenFile,
  logging: Logging,
  address: () => { host: string; port: number },
): Promise<(req: IncomingMessage, res: ServerResponse) => void> {
  const { createViewHandler } = await import('@slivingdoc/view');
  const participant = await service.session({ notebookDir: join(roots.notebookDir, '.view') });
  const handler = createViewHandler({
    service: participant,
    store,
    mergeAdditions: config.mergeAdditions,
    address,
    verify: (token) => tokens.verify(token),
    log: logging.module('app'),
  });
  let pulled: Promise<unknown> | undefined;
  return (req, res) => {
    pulled ??= participant.pull({}).catch((err: unknown) => {
      pulled = undefined;
      throw err;
    });
    pulled.then(
      () => handler(req, res),
      () => res.writeHead(503, { 'Retry-After': '1' }).end(),
    );
  };
}
