import { SUPPORTED_PROTOCOL_VERSIONS } from './protocol-versions';

/**
 * MCP revision 2026-07-28, the stateless one: no `initialize` and no session; every request
 * names its protocol version, capabilities and (optionally) client info in `params._meta`,
 * and every result says what it is in `resultType`. Served beside the 2025 revisions, whose
 * wire stays byte for byte as it was.
 */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

/** Every revision the server speaks, newest first (`server/discover`'s `supportedVersions`). */
export const ALL_PROTOCOL_VERSIONS: readonly string[] = [
  STATELESS_PROTOCOL_VERSION,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The request's `params._meta`, or an empty object. */
function metaOf(params: unknown): Record<string, unknown> {
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) ? meta : {};
}

/** True when a request is of the stateless revision (its `_meta` names 2026-07-28). */
export function isStatelessRequest(params: unknown): boolean {
  return metaOf(params)[PROTOCOL_VERSION_KEY] === STATELESS_PROTOCOL_VERSION;
}

/** The client's name and version from a stateless request's `_meta`, when it gives both. */
export function statelessClientInfo(
  params: unknown,
): { name: string; version: string } | undefined {
  const info = metaOf(params)[CLIENT_INFO_KEY];
  if (!isObject(info) || typeof info.name !== 'string') return undefined;
  return { name: info.name, version: typeof info.version === 'string' ? info.version : '' };
}

/**
 * A stateless result: the 2025 result with its `resultType` (every answer here is complete).
 * A list also says how long a client may cache it: not at all (`ttlMs` 0), and only for this
 * caller (`private`), since a token's path sets shape the descriptions and may change.
 */
export function statelessResult(
  method: string,
  result: Record<string, unknown>,
): Record<string, unknown> {
  const cache = method === 'tools/list' ? { ttlMs: 0, cacheScope: 'private' } : {};
  return { ...result, ...cache, resultType: 'complete' };
}

/** The `server/discover` result: what `initialize` tells a 2025 client, in the 2026 shape. */
export function discoverResult(init: {
  version: string;
  instructions: string;
}): Record<string, unknown> {
  return {
    supportedVersions: [...ALL_PROTOCOL_VERSIONS],
    capabilities: { tools: {} },
    instructions: init.instructions,
    _meta: { [SERVER_INFO_KEY]: { name: 'slivingdoc', version: init.version } },
  };
}
