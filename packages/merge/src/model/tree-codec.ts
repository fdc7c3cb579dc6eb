import { TreeError } from '../errors';
import { isOid, type Oid } from './object-format';

/** The only two tree modes a notebook has (contract §4: file modes are not state). */
export const FILE_MODE = '100644';
export const DIR_MODE = '40000';

/** One entry of one tree object. `name` is a single path segment. */
export interface TreeObjectEntry {
  mode: typeof FILE_MODE | typeof DIR_MODE;
  name: string;
  oid: Oid;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** In a `u` regex a paired surrogate is one code point, so this matches only lone halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Checks one path segment for what a git tree and every OS can hold. The full notebook name
 * rules (device names, reserved characters, folding) belong to `@slivingdoc/policy`; these are
 * the rules without which the tree itself would be unsafe or ambiguous.
 */
export function checkSegment(name: string, path: string): void {
  if (
    name.length === 0 ||
    name === '.' ||
    name === '..' ||
    name.toLowerCase() === '.git' ||
    name.includes('/') ||
    name.includes('\0') ||
    LONE_SURROGATE.test(name)
  ) {
    throw new TreeError('INVALID_PATH', `invalid path segment in ${JSON.stringify(path)}`, path);
  }
}

/** Git's tree order: byte order of the names, a directory compared as if its name ended in `/`. */
function compareEntries(a: { key: Buffer }, b: { key: Buffer }): number {
  return Buffer.compare(a.key, b.key);
}

/**
 * Serialises a tree object (entries in any order; names unique). Our own code: isomorphic-git
 * sorts tree entries as UTF-16 strings, while git's order (and so the oid) is by UTF-8 bytes.
 */
export function encodeTree(entries: TreeObjectEntry[]): Uint8Array {
  const keyed = entries.map((entry) => ({
    entry,
    name: Buffer.from(entry.name, 'utf8'),
    key: Buffer.from(entry.mode === DIR_MODE ? `${entry.name}/` : entry.name, 'utf8'),
  }));
  keyed.sort(compareEntries);
  const parts: Buffer[] = [];
  for (const { entry, name } of keyed) {
    parts.push(
      Buffer.from(`${entry.mode} `),
      name,
      Buffer.from([0]),
      Buffer.from(entry.oid, 'hex'),
    );
  }
  return Buffer.concat(parts);
}

/**
 * Parses a tree object strictly: only modes 100644 and 40000, valid UTF-8 names that pass
 * {@link checkSegment}, unique names. isomorphic-git's own reader silently maps other modes
 * (100664, 100755, 120000) onto allowed ones, which would hide a foreign tree's symlink.
 */
export function decodeTree(content: Uint8Array, where: string): TreeObjectEntry[] {
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const entries: TreeObjectEntry[] = [];
  const seen = new Set<string>();
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const nul = space < 0 ? -1 : bytes.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > bytes.length) {
      throw new TreeError('MALFORMED_TREE', `tree ${where} is truncated or malformed`, where);
    }
    const mode = bytes.toString('latin1', at, space);
    let name: string;
    try {
      name = utf8.decode(bytes.subarray(space + 1, nul));
    } catch {
      throw new TreeError('INVALID_PATH', `tree ${where} has a name that is not UTF-8`, where);
    }
    const path = where === '' ? name : `${where}/${name}`;
    if (mode !== FILE_MODE && mode !== DIR_MODE) {
      throw new TreeError(
        'INVALID_MODE',
        `tree entry ${JSON.stringify(path)} has mode ${mode}`,
        path,
      );
    }
    checkSegment(name, path);
    if (seen.has(name))
      throw new TreeError('MALFORMED_TREE', `tree entry ${JSON.stringify(path)} repeats`, path);
    seen.add(name);
    const oid = bytes.toString('hex', nul + 1, nul + 21);
    entries.push({ mode, name, oid });
    at = nul + 21;
  }
  return entries;
}

/** Splits and checks a notebook path; throws TreeError INVALID_PATH. */
export function splitNotebookPath(path: string): string[] {
  const segments = path.split('/');
  for (const segment of segments) checkSegment(segment, path);
  return segments;
}

/** Throws TreeError INVALID_PATH unless `oid` is 40 lowercase hex digits. */
export function checkOid(oid: string, path: string): void {
  if (!isOid(oid))
    throw new TreeError(
      'INVALID_PATH',
      `entry ${JSON.stringify(path)} has no valid object id`,
      path,
    );
}
