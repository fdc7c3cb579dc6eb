import { randomBytes, timingSafeEqual } from 'node:crypto';
import { userInfo } from 'node:os';
import { DEFAULT_ACTOR, isValidActor } from '@slivingdoc/engine/actor';
import type { Invocation } from '../config/types';
import { processLogging } from '../runtime/process-logging';
import { asRefusal, refuse } from '../runtime/refuse';
import { type Roots, serverRoots } from '../runtime/roots';
import { startService } from '../runtime/service';
import { holdsUnpublished, settleSessionDir } from '../runtime/session-dir';
import { openStore, probeStore } from '../runtime/store';
import { tokenFilePath } from '../runtime/token-file';
import { VERSION } from '../version';

type ViewInvocation = Extract<Invocation, { kind: 'view' }>;

/**
 * `slivingdoc view --listen HOST:PORT`: the web view of the notebook (docs/view.md). Opens the
 * store as `serve` does, pulls its own notebook directory (the session directory unless a
 * workspace root is given), listens, and prints one line: the URL with a fresh login token.
 * That token lives only in this process's memory (it is written nowhere and dies with the
 * process); a token of the token file logs in too. The view's modules load only here.
 */
export async function runView(invocation: ViewInvocation): Promise<number> {
  const { config } = invocation;
  let roots: Roots;
  try {
    roots = await serverRoots(config);
  } catch (error) {
    return refuse(asRefusal(error));
  }
  const { scrubber, logging } = processLogging(roots.privateRoot);
  const log = logging.module('app');
  const stop = stopRequest();
  let started: Awaited<ReturnType<typeof start>>;
  try {
    started = await start(invocation, roots, logging, log);
  } catch (error) {
    if (roots.session) await settleSessionDir(roots.session, false, undefined);
    return refuse(asRefusal(error), scrubber);
  }
  const { listener, service, store, token } = started;
  // The one line on stdout: where to point a browser (the token logs in once, then a cookie).
  process.stdout.write(`${listener.url}/?token=${token}\n`);
  log.info({ version: VERSION, store: config.store.kind, url: listener.url }, 'serving the view');
  const why = await stop;
  log.info({ why }, 'stopping the view');
  await listener.close();
  const keep = roots.session
    ? await holdsUnpublished(roots.notebookDir, await service.localChanges()).catch(() => true)
    : false;
  await service.close();
  await store.close?.();
  if (roots.session) await settleSessionDir(roots.session, keep, log);
  process.exit(0);
}

async function start(
  { config, listen, tokenFile }: ViewInvocation,
  roots: Roots,
  logging: ReturnType<typeof processLogging>['logging'],
  log: ReturnType<ReturnType<typeof processLogging>['logging']['module']>,
) {
  const store = await openStore(config.store);
  const { readOnly } = await probeStore(store);
  const service = await startService(config, roots, store, logging, { readOnlyStore: readOnly });
  // The view reads and reverts through its own directory, which must be pulled once.
  await service.pull({});
  const [{ createViewHandler }, http] = await Promise.all([
    import('@slivingdoc/view'),
    import('@slivingdoc/http'),
  ]);
  const tokens = http.openTokenFile(tokenFilePath(tokenFile), {
    onProblem: (problem: unknown) => log.warn({ problem: String(problem) }, 'token file refused'),
  });
  const token = `sld_${randomBytes(32).toString('base64url')}`;
  // The printed token is the person's who started the view: it approves and rejects.
  const grant = { name: viewActor(config.actor), readOnly: false, reviewer: true };
  let address = { host: listen.host, port: listen.port };
  const handler = createViewHandler({
    service,
    store,
    mergeAdditions: config.mergeAdditions,
    address: () => address,
    verify: (presented) => (sameToken(presented, token) ? grant : tokens.verify(presented)),
    log,
  });
  const listener = await http.startListener({ host: listen.host, port: listen.port }, handler);
  address = { host: listen.host, port: listener.port };
  return { listener, service, store, token };
}

/** The actor of the fresh token's reverts: `--actor`/`SLIVINGDOC_ACTOR`, else the OS user. */
function viewActor(configured: string | undefined): string {
  if (configured !== undefined) return configured;
  try {
    const name = userInfo().username;
    return isValidActor(name) ? name : DEFAULT_ACTOR;
  } catch {
    return DEFAULT_ACTOR;
  }
}

/** Constant-time comparison of a presented token with the fresh one. */
function sameToken(presented: string, token: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function stopRequest(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}
