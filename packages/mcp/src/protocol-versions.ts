/**
 * The MCP protocol versions the SDK's `Server` negotiates (its `SUPPORTED_PROTOCOL_VERSIONS`,
 * newest first), repeated here so the transport can answer the first `initialize` before the
 * SDK (and zod) are loaded; `test/jsonrpc.test.ts` fails when the SDK's list changes.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
] as const;

/**
 * The versions whose base protocol includes JSON-RPC batches: added in 2025-03-26, removed
 * again in 2025-06-18.
 */
export const BATCH_PROTOCOL_VERSIONS: readonly string[] = ['2025-03-26'];

/** What the SDK answers: the client's version when supported, else the latest. */
export function negotiateProtocolVersion(requested: string): string {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : SUPPORTED_PROTOCOL_VERSIONS[0];
}
