import { createMcpServer, StrictStdioServerTransport } from '@slivingdoc/mcp';
import type { AppConfig } from '../config/types';
import { trackInFlight } from '../runtime/in-flight';
import { processLogging } from '../runtime/process-logging';
import { asRefusal, refuse } from '../runtime/refuse';
import { configuredRoots, createSessionRoots, type Roots } from '../runtime/roots';
import { startService } from '../runtime/service';
import { createShutdown } from '../runtime/shutdown';
import { openStore, probeStore } from '../runtime/store';
import { VERSION } from '../version';

/**
 * `slivingdoc serve`: MCP over stdio. Stdout carries only protocol messages; every log
 * record goes to stderr. Resolves with the exit code once the process has shut down.
 */
export async function runServe(config: AppConfig): Promise<number> {
  let roots: Roots;
  try {
    roots =
      config.workspaceRoot === undefined
        ? await createSessionRoots(config)
        : await configuredRoots(config, config.workspaceRoot, config.privateRoot!);
  } catch (error) {
    return refuse(asRefusal(error));
  }
  const { scrubber, logging } = processLogging(roots.privateRoot);
  const log = logging.module('app');
  let started: Awaited<ReturnType<typeof start>>;
  try {
    started = await start(config, roots, logging);
  } catch (error) {
    return refuse(asRefusal(error), scrubber);
  }
  const { store, tracked } = started;
  // The strict transport notes duplicate keys in `arguments` (SPEC §2) for the adapter.
  const transport = new StrictStdioServerTransport();
  const server = createMcpServer({
    version: VERSION,
    service: tracked.service,
    logger: logging.module('mcp'),
    scrubber,
    duplicateKeys: transport.duplicateKeys,
    // Without --actor / SLIVINGDOC_ACTOR, each client's clientInfo.name is its actor.
    ...(config.actor !== undefined ? { actor: config.actor } : {}),
  });
  const shutdown = createShutdown(
    {
      stopAccepting: () => server.close(),
      drain: (deadline) => tracked.drain(deadline),
      close: async () => {
        await tracked.service.close();
        await store.close?.();
      },
    },
    log,
  );
  const stopped = new Promise<void>((resolve) => {
    const stop = (why: string) => void shutdown(why).then(resolve);
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
    // The host closing our stdin (the usual way to stop a stdio server) closes the transport.
    server.onclose = () => stop('transport closed');
  });
  await server.connect(transport);
  log.info({ version: VERSION, store: config.store.kind }, 'serving MCP over stdio');
  await stopped;
  // Lingering handles (the S3 client's keep-alive sockets) must not keep the process up.
  process.exit(0);
}

async function start(
  config: AppConfig,
  roots: Roots,
  logging: ReturnType<typeof processLogging>['logging'],
) {
  const store = await openStore(config.store);
  await probeStore(store);
  const service = await startService(config, roots, store, logging);
  return { store, tracked: trackInFlight(service) };
}
