export { type BodyResult, MAX_BODY_BYTES, readBody, writeRefusal } from './body';
export {
  allowedHostHeaders,
  bearerToken,
  checkHostAndOrigin,
  type GuardResult,
  type HostOriginPolicy,
  hostForUrl,
  listenerOrigins,
  type Refusal,
  unauthorized,
} from './guard';
export {
  DEFAULT_LINGER_BOUNDS,
  hasUnreadBody,
  type LingerBounds,
  lingerIfUnread,
} from './linger';
export {
  isLoopbackHost,
  KEEP_ALIVE_TIMEOUT_MS,
  type Listener,
  type ListenerOptions,
  PublicBindError,
  startListener,
} from './listener';
export {
  addToken,
  defaultTokenFilePath,
  listTokens,
  type OpenTokenFile,
  type OpenTokenFileOptions,
  openTokenFile,
  removeToken,
  TokenFileError,
  type TokenGrant,
  type TokenListing,
  type TokenOptions,
} from './token-file';
