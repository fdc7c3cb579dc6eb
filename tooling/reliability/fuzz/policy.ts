import {
  checkMessage,
  checkNotebookPath,
  foldKey,
  PolicyError,
  parseRequestPath,
} from '@slivingdoc/policy';
import fc from 'fast-check';
import { assertCataloguedRejection, isFileReason } from '../catalogue';
import { aroundByteLimit, edgyString, notebookPathLike } from './text';

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
// A lone surrogate is a code point of category Cs in a `u` regex; a pair is one astral code point.
const LONE_SURROGATE = /\p{Cs}/u;
const wellFormed = (s: string) => !LONE_SURROGATE.test(s);
const FORBIDDEN = /[\\:*?"<>|\p{Cc}]/u;

/**
 * Path rules (contract §4): `checkNotebookPath` never throws, answers only catalogued file
 * reasons, and whatever it accepts really satisfies the rules that can be checked from
 * outside; `foldKey` is total and idempotent on accepted paths.
 */
export const notebookPathRules = fc.property(notebookPathLike, (path) => {
  const verdict = checkNotebookPath(path);
  if (verdict !== undefined) {
    if (!isFileReason(verdict)) throw new Error(`uncatalogued file reason ${verdict}`);
    return;
  }
  if (!wellFormed(path) || path.normalize('NFC') !== path)
    throw new Error('accepted non-NFC or ill-formed');
  if (utf8(path) > 4096) throw new Error('accepted an over-long path');
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.' || segment === '..' || segment === '.git')
      throw new Error(`accepted segment ${JSON.stringify(segment)}`);
    if (utf8(segment) > 255 || FORBIDDEN.test(segment) || /[ .]$/.test(segment))
      throw new Error(`accepted segment ${JSON.stringify(segment)}`);
  }
  const key = foldKey(path);
  if (foldKey(key) !== key) throw new Error('foldKey is not idempotent');
});

/**
 * Request paths (contract §2): `parseRequestPath` rejects only with PATH_INVALID, and what it
 * returns is absolute, lexically clean, within the byte limit and a fixed point.
 */
export const requestPathRules = fc.property(
  fc.oneof(
    edgyString,
    aroundByteLimit(4096).map((s) => `/${s}`),
    notebookPathLike.map((p) => `/${p}`),
    notebookPathLike.map((p) => `~/${p}`),
  ),
  (raw) => {
    let parsed: string | undefined;
    try {
      parsed = parseRequestPath(raw, { home: '/home/fuzz' });
    } catch (err) {
      assertCataloguedRejection(err, PolicyError, 'INVALID_REQUEST');
      if ((err as PolicyError).reason !== 'PATH_INVALID') throw err;
      return;
    }
    if (parsed === undefined) {
      if (raw !== '') throw new Error('undefined for a non-empty path');
      return;
    }
    if (!parsed.startsWith('/') || parsed.includes('\u0000') || !wellFormed(parsed))
      throw new Error(`bad result ${JSON.stringify(parsed)}`);
    if (
      parsed !== '/' &&
      (parsed.endsWith('/') || parsed.includes('//') || /\/\.\.?(\/|$)/.test(parsed))
    )
      throw new Error(`unclean result ${JSON.stringify(parsed)}`);
    if (parseRequestPath(parsed, { home: '/home/fuzz' }) !== parsed)
      throw new Error('not a fixed point');
  },
);

/**
 * Commit messages (contract §2): rejection only with MESSAGE_INVALID; an accepted message is
 * within 16,384 bytes, has no U+0000 and is not only White_Space.
 */
export const messageRules = fc.property(fc.oneof(edgyString, aroundByteLimit(16384)), (message) => {
  try {
    checkMessage(message);
  } catch (err) {
    assertCataloguedRejection(err, PolicyError, 'INVALID_REQUEST');
    if ((err as PolicyError).reason !== 'MESSAGE_INVALID') throw err;
    return;
  }
  if (utf8(message) > 16384 || message.includes('\u0000') || !wellFormed(message))
    throw new Error('accepted an invalid message');
  if (/^\p{White_Space}*$/u.test(message)) throw new Error('accepted a blank message');
});
