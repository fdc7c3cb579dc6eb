import { StrictStdioServerTransport, serverInstructions } from '@slivingdoc/mcp/stdio';
import type { AppConfig } from '../config/types';
import { asRefusal, refuse } from '../runtime/refuse';
import { type Roots, serverRoots } from '../runtime/roots';
import { processScrubber } from '../runtime/scrubber';
import { holdsUnpublished, settleSessionDir } from '../runtime/session-dir';
import { createShutdown, stopRequests } from '../runtime/shutdown';
import { openStore, probeStore } from '../runtime/store';
import { VERSION } from '../version';

/**
 * `slivingdoc serve`: MCP over stdio. Stdout carries only protocol messages; every log
 * record goes to stderr. Resolves with the exit code once the process has shut down.
 *
 * Start-up is ordered for the host's handshake (docs/hosts.md, "Start-up"): the transport
 * reads stdin at once and answers the first `initialize` as soon as the store has passed
 * its probe, and the engine, the MCP server and pino load right after that answer; requests
 * that arrive meanwhile wait for them.
 */
export async function runServe(config: AppConfig): Promise<number> {
  let roots: Roots;
  try {
    roots = await serverRoots(config);
  } catch (error) {
    return refuse(asRefusal(error));
  }
  const scrubber = processScrubber(roots.privateRoot);
  const stops = stopRequests();
  const transport = new StrictStdioServerTransport();
  const storeReady = openStore(config.store).then(async (store) => ({
    store,
    access: await probeStore(store),
  }));
  const initializeResult = storeReady.then(({ access }) => ({
    capabilities: { tools: {} },
    serverInfo: { name: 'slivingdoc', version: VERSION },
    instructions: serverInstructions(
      roots.notebookDir,
      { readOnly: config.readOnly, writable: config.writable },
      access.readOnly ? 'store' : undefined,
    ),
  }));
  // A failed start-up is reported as a refusal below, whether or not initialize came.
  initializeResult.catch(() => undefined);
  transport.listen(() => initializeResult);

  let session: Awaited<ReturnType<typeof startSession>>;
  try {
    const { store, access } = await storeReady;
    // Loading the session's modules blocks the event loop for a while: let the transport
    // answer an initialize that has already arrived first (it waits for the same probe).
    await new Promise((resolve) => setImmediate(resolve));
    session = await startSession(config, roots, store, transport, access.readOnly);
  } catch (error) {
    // Stop reading stdin, or it keeps the process alive after the refusal.
    await transport.close();
    if (roots.session) await settleSessionDir(roots.session, false, undefined);
    return refuse(asRefusal(error), scrubber);
  }
  const { server, tracked, log, store } = session;
  let keepSession = false;
  const shutdown = createShutdown(
    {
      stopAccepting: () => server.close(),
      drain: (deadline) => tracked.drain(deadline),
      close: async () => {
        // Decided before the service closes: the check scans under each directory's lock.
        if (roots.session)
          keepSession = await holdsUnpublished(
            roots.notebookDir,
            await tracked.service.localChanges(),
          ).catch(() => true);
        await tracked.service.close();
        await store.close?.();
      },
    },
    log,
  );
  // The host closing our stdin (the usual way to stop a stdio server) closes the transport.
  server.onclose = () => stops.request('transport closed');
  await server.connect(transport);
  log.info({ version: VERSION, store: config.store.kind }, 'serving MCP over stdio');
  await shutdown(await stops.first);
  if (roots.session) await settleSessionDir(roots.session, keepSession, log);
  // Lingering handles (the S3 client's keep-alive sockets) must not keep the process up.
  process.exit(0);
}

async function startSession(
  config: AppConfig,
  roots: Roots,
  store: Awaited<ReturnType<typeof openStore>>,
  transport: StrictStdioServerTransport,
  readOnlyStore: boolean,
) {
  const { startMcpSession } = await import('../runtime/mcp-session');
  return {
    ...(await startMcpSession({ config, roots, store, transport, readOnlyStore })),
    store,
  };
}
