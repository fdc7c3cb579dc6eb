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
  isLoopbackHost,
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
