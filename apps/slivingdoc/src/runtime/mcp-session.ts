import { createMcpServer, type StrictStdioServerTransport } from '@slivingdoc/mcp';
import type { ObjectStore } from '@slivingdoc/store';
import type { AppConfig } from '../config/types';
import { VERSION } from '../version';
import { trackInFlight } from './in-flight';
import { processLogging } from './process-logging';
import type { Roots } from './roots';
import { startService } from './service';

/**
 * The part of `serve` that loads the engine, the MCP server and pino: a module of its own so
 * the bundler puts it in a chunk `serve` imports only after it has answered the first
 * `initialize`, when one has arrived by then (docs/hosts.md, "Start-up").
 */
export async function startMcpSession(init: {
  config: AppConfig;
  roots: Roots;
  store: ObjectStore;
  transport: StrictStdioServerTransport;
  /** The probe found the store's credentials can only read. */
  readOnlyStore: boolean;
}) {
  const { config, roots, store, transport, readOnlyStore } = init;
  const { scrubber, logging } = processLogging(roots.privateRoot);
  transport.setLogger(logging.module('mcp'));
  const tracked = trackInFlight(
    await startService(config, roots, store, logging, { readOnlyStore }),
  );
  const server = createMcpServer({
    version: VERSION,
    service: tracked.service,
    logger: logging.module('mcp'),
    scrubber,
    duplicateKeys: transport.duplicateKeys,
    // Without --actor / SLIVINGDOC_ACTOR, each client's clientInfo.name is its actor.
    ...(config.actor !== undefined ? { actor: config.actor } : {}),
  });
  return { server, tracked, log: logging.module('app') };
}
