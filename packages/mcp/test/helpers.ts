import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createScrubber } from '@slivingdoc/envelope';
import { createMcpServer, type McpServerOptions } from '../src';
import { FakeNotebookService, recordingLogger } from './fake-service';

export const FIXED_ID = '0011223344556677';

/** A server on an in-memory transport, an SDK client, and what the server sent. */
export async function connect(overrides: Partial<McpServerOptions> = {}) {
  const service =
    (overrides.service as FakeNotebookService | undefined) ?? new FakeNotebookService();
  const { records, logger } = recordingLogger();
  const server = createMcpServer({
    version: '1.2.3',
    service,
    scrubber: createScrubber({ privateRoot: '/var/p', env: {} }),
    logger,
    home: '/home/u',
    newDiagnosticId: () => FIXED_ID,
    ...overrides,
  });
  const client = new Client({ name: 'test', version: '0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { client, server, service, records, sent };
}
