import { posix } from 'node:path';
import { PolicyError } from './errors';
import { isWellFormedText, utf8Length } from './text';

const MAX_REQUEST_PATH_BYTES = 4096;
const MAX_MESSAGE_BYTES = 16384;
// The Unicode White_Space property (U+0085 and U+3000 are in it, U+FEFF and U+200B are
// not); JavaScript's `\s` differs from it, so it must not be used here (contract §2).
const ONLY_WHITE_SPACE = /^\p{White_Space}*$/u;

/**
 * Decodes a request's `path` argument (contract §2): omitted or empty means the notebook
 * directory (`undefined`); `~/` expands to `env.home` before the byte and absolute checks;
 * the result must be 1–4,096 UTF-8 bytes, absolute, without U+0000 or lone surrogates, and
 * is lexically cleaned (`.`/`..` segments, repeated and trailing `/`). `~user` is not
 * expanded and so is not absolute. Throws {@link PolicyError} `PATH_INVALID`.
 */
export function parseRequestPath(
  raw: string | undefined,
  env: { home: string },
): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!isWellFormedText(raw)) throw invalidPath(raw, 'is not valid UTF-8');
  const expanded = raw.startsWith('~/') ? `${env.home.replace(/\/+$/, '')}/${raw.slice(2)}` : raw;
  const bytes = utf8Length(expanded);
  if (bytes < 1 || bytes > MAX_REQUEST_PATH_BYTES) {
    throw invalidPath(raw, 'must be 1 to 4,096 UTF-8 bytes');
  }
  if (expanded.includes('\u0000')) throw invalidPath(raw, 'contains U+0000');
  if (!posix.isAbsolute(expanded)) throw invalidPath(raw, 'must be absolute (or start with ~/)');
  return cleanAbsolutePath(expanded);
}

/** Lexically cleans an absolute path: resolves `.` and `..`, drops repeated and trailing `/`. */
export function cleanAbsolutePath(path: string): string {
  return posix.resolve('/', path);
}

/**
 * Checks a commit message (contract §2): at most 16,384 UTF-8 bytes, no U+0000, no lone
 * surrogate, and not only Unicode White_Space. Throws {@link PolicyError} `MESSAGE_INVALID`.
 */
export function checkMessage(message: string): void {
  if (!isWellFormedText(message)) throw invalidMessage('the message is not valid UTF-8');
  if (utf8Length(message) > MAX_MESSAGE_BYTES) {
    throw invalidMessage('the message exceeds 16,384 UTF-8 bytes');
  }
  if (message.includes('\u0000')) throw invalidMessage('the message contains U+0000');
  if (ONLY_WHITE_SPACE.test(message)) throw invalidMessage('the message is blank');
}

/** Names the path as the caller sent it, quoted and shortened (it may be long or malformed). */
function invalidPath(raw: string, why: string): PolicyError {
  // JSON.stringify escapes U+0000 and lone surrogates, so the message stays well-formed.
  const quoted = JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
  return new PolicyError('PATH_INVALID', `Invalid path ${quoted}: the path ${why}.`);
}

function invalidMessage(why: string): PolicyError {
  return new PolicyError('MESSAGE_INVALID', `Invalid message: ${why}.`);
}
