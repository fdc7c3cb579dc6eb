import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { defaultTokenFilePath } from './token-path';

export { defaultTokenFilePath };

/**
 * What one token lets its bearer do. `name` is the session's actor; the path sets, when
 * present, replace the process's own for that session.
 */
export interface TokenGrant {
  readonly name: string;
  readonly readOnly: boolean;
  readonly writable?: readonly string[];
  readonly readOnlyPaths?: readonly string[];
  /** `queue`: every tool commit of this token is queued for review (docs/review.md). */
  readonly review?: 'queue';
  /** A person's token for the web view's Approve and Reject; refused at `/mcp`. */
  readonly reviewer?: boolean;
}

/** The options of {@link addToken}: the grant without its name. */
export type TokenOptions = Partial<Omit<TokenGrant, 'name'>>;

/** A token as `listTokens` shows it: the grant and when it was made, never the secret. */
export interface TokenListing extends TokenGrant {
  readonly created: string;
}

/** One stored token: only the SHA-256 of the secret is kept. */
interface StoredToken extends TokenListing {
  readonly sha256: string;
}

interface TokenFileContent {
  readonly version: 1;
  readonly tokens: readonly StoredToken[];
}

/** A token file that cannot be used as it is (unreadable, not ours, too open, a bad entry). */
export class TokenFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenFileError';
  }
}

/** The prefix of every token, so a leaked one is recognisable by secret scanners. */
const TOKEN_PREFIX = 'sld_';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Adds a token called `name` and returns its secret, the only time it exists outside the
 * bearer's hands (the file keeps its SHA-256). A name already in the file is refused:
 * remove it first, so a token is never replaced by accident. So is a name that differs from
 * one in the file only in case: a token's name is its directory's, and the two would share
 * one directory on a case-insensitive file system.
 */
export function addToken(file: string, name: string, options: TokenOptions = {}): string {
  if (name.length === 0) throw new TokenFileError('a token needs a name');
  const content = readTokenFile(file);
  const same = content.tokens.find((token) => sameIgnoringCase(token.name, name));
  if (same?.name === name)
    throw new TokenFileError(`a token named "${name}" already exists (remove it first)`);
  if (same !== undefined)
    throw new TokenFileError(
      `a token named "${same.name}" already exists, and "${name}" differs from it only in case: the two would share one directory on a case-insensitive file system`,
    );
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const stored: StoredToken = {
    name,
    readOnly: options.readOnly ?? false,
    ...(options.writable === undefined ? {} : { writable: [...options.writable] }),
    ...(options.readOnlyPaths === undefined ? {} : { readOnlyPaths: [...options.readOnlyPaths] }),
    ...(options.review === undefined ? {} : { review: options.review }),
    ...(options.reviewer === true ? { reviewer: true } : {}),
    created: new Date().toISOString(),
    sha256: sha256(token).toString('hex'),
  };
  writeTokenFile(file, { version: 1, tokens: [...content.tokens, stored] });
  return token;
}

/** True when two names are equal but for case (`token add` admits ASCII names only). */
function sameIgnoringCase(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Every token's grant and creation time, in the order they were added. */
export function listTokens(file: string): TokenListing[] {
  return readTokenFile(file).tokens.map(({ sha256: _hidden, ...listing }) => listing);
}

/** Removes the token called `name`; false when there was none. */
export function removeToken(file: string, name: string): boolean {
  const content = readTokenFile(file);
  const kept = content.tokens.filter((token) => token.name !== name);
  if (kept.length === content.tokens.length) return false;
  writeTokenFile(file, { version: 1, tokens: kept });
  return true;
}

/** A token file as a listener uses it. */
export interface OpenTokenFile {
  /** The grant of a presented token, or undefined for a wrong, removed or absent one. */
  verify(token: string | undefined): TokenGrant | undefined;
  /** How many tokens the file holds now (0 when it is missing or unusable). */
  size(): number;
  close(): void;
}

/** What {@link openTokenFile} reports when the file turns unusable (it then grants nothing). */
export interface OpenTokenFileOptions {
  onProblem?: (error: TokenFileError) => void;
}

/**
 * Opens the token file for verification. The file is re-read whenever it changes (its
 * identity, size or modification time), checked on every call: `token add` and `token
 * remove` take effect at the next request without a restart or a watcher to miss an event.
 * A file that turns unusable grants nothing (fail closed) and is reported once per change.
 * Throws {@link TokenFileError} when the file is unusable at open.
 */
export function openTokenFile(file: string, options: OpenTokenFileOptions = {}): OpenTokenFile {
  let stamp = fileStamp(file);
  let tokens = readTokenFile(file).tokens.map(toVerifiable);
  const refresh = () => {
    const now = fileStamp(file);
    if (now === stamp) return;
    stamp = now;
    try {
      tokens = readTokenFile(file).tokens.map(toVerifiable);
    } catch (error) {
      tokens = [];
      options.onProblem?.(error as TokenFileError);
    }
  };
  return {
    verify(token) {
      refresh();
      if (token === undefined || token.length === 0) return undefined;
      const presented = sha256(token);
      // Every entry is compared, each in constant time: neither the time nor the path taken
      // tells how close a guess came or which entry it nearly matched.
      let match: TokenGrant | undefined;
      for (const entry of tokens) {
        if (timingSafeEqual(entry.digest, presented) && match === undefined) match = entry.grant;
      }
      return match;
    },
    size() {
      refresh();
      return tokens.length;
    },
    close() {
      tokens = [];
    },
  };
}

function toVerifiable(token: StoredToken): { digest: Buffer; grant: TokenGrant } {
  const { sha256: hex, created: _created, ...grant } = token;
  return { digest: Buffer.from(hex, 'hex'), grant: Object.freeze(grant) };
}

function fileStamp(file: string): string {
  try {
    const stat = statSync(file);
    return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}`;
  } catch {
    return 'missing';
  }
}

/** The file's tokens; a missing file holds none. */
function readTokenFile(file: string): TokenFileContent {
  let text: string;
  try {
    const stat = statSync(file);
    // Like ssh with a private key: a token file others can read or write is not trusted.
    if ((stat.mode & 0o077) !== 0)
      throw new TokenFileError(
        `the token file ${file} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); make it 0600`,
      );
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid())
      throw new TokenFileError(`the token file ${file} belongs to another user`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, tokens: [] };
    if (error instanceof TokenFileError) throw error;
    throw new TokenFileError(`cannot read the token file ${file}: ${(error as Error).message}`);
  }
  return parseTokenFile(file, text);
}

function parseTokenFile(file: string, text: string): TokenFileContent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TokenFileError(`the token file ${file} is not JSON`);
  }
  const bad = (what: string) => new TokenFileError(`the token file ${file} ${what}`);
  if (!isRecord(value) || value.version !== 1 || !Array.isArray(value.tokens))
    throw bad('is not a version 1 slivingdoc token file');
  const names = new Set<string>();
  const tokens = value.tokens.map((entry, index): StoredToken => {
    if (
      !isRecord(entry) ||
      typeof entry.name !== 'string' ||
      entry.name.length === 0 ||
      typeof entry.readOnly !== 'boolean' ||
      typeof entry.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(entry.sha256) ||
      typeof entry.created !== 'string' ||
      !optionalStrings(entry.writable) ||
      !optionalStrings(entry.readOnlyPaths) ||
      (entry.review !== undefined && entry.review !== 'queue') ||
      (entry.reviewer !== undefined && entry.reviewer !== true)
    )
      throw bad(`has a malformed entry (number ${index + 1})`);
    if (names.has(entry.name)) throw bad(`names "${entry.name}" twice`);
    names.add(entry.name);
    return entry as unknown as StoredToken;
  });
  return { version: 1, tokens };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const optionalStrings = (value: unknown) =>
  value === undefined || (Array.isArray(value) && value.every((item) => typeof item === 'string'));

/**
 * Writes the whole file atomically (a 0600 temporary file renamed over it), so a listener
 * re-reading it never sees half a file, and creates the directory 0700 when it is missing.
 */
function writeTokenFile(file: string, content: TokenFileContent): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}
