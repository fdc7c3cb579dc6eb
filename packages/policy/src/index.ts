export { PathSetError, PolicyError, type PolicyReason } from './errors';
export {
  checkNotebookPath,
  checkSegment,
  foldKey,
  type PathReason,
} from './notebook-path';
export { createPathPolicy, type PathPolicy } from './path-sets';
export { checkMessage, cleanAbsolutePath, parseRequestPath } from './request';
export { type ResolveRequestInit, resolveRequestPath } from './resolve';
export { isWellFormedText, utf8Length } from './text';
