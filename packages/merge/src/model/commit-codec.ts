import { CommitFormatError } from '../errors';
import { isOid, type Oid } from './object-format';

/** A commit as the notebook uses it: one tree, zero or one parent, exact message bytes. */
export interface CommitData {
  tree: Oid;
  parent?: Oid;
  /** The caller's message, byte for byte. */
  message: Uint8Array;
  /** Commit time: UTC, whole seconds since the epoch. */
  time: number;
  /**
   * The participant who wrote the change (contract §9: the author name; `slivingdoc` when absent).
   * 1–64 bytes of UTF-8 without control characters, `<` or `>`; decoding a foreign commit
   * reports whatever name its author line carries.
   */
  author?: string;
}

/** The author name of a commit whose writer named no actor, and the committer's name. */
export const DEFAULT_AUTHOR = 'slivingdoc';

/** The e-mail of every author and the committer (contract §9). */
const EMAIL = '<slivingdoc@localhost>';

/** Committer of every commit (contract §9). */
export const IDENTITY = `${DEFAULT_AUTHOR} ${EMAIL}`;

/** Whether `name` may be an author name: 1–64 UTF-8 bytes, no control character, `<` or `>`. */
export function isValidAuthorName(name: string): boolean {
  const bytes = Buffer.byteLength(name, 'utf8');
  return (
    bytes >= 1 &&
    bytes <= 64 &&
    // A lone surrogate (not well-formed UTF-16) has no UTF-8 form.
    !/\p{Surrogate}/u.test(name) &&
    !/[\p{Cc}<>]/u.test(name)
  );
}

/**
 * Serialises a commit object. Written by hand because isomorphic-git's commit writers normalise
 * newlines in the message (contract §6); the message bytes follow the blank line unchanged.
 */
export function encodeCommit(commit: CommitData): Uint8Array {
  if (!isOid(commit.tree) || (commit.parent !== undefined && !isOid(commit.parent))) {
    throw new CommitFormatError('commit tree and parent must be object ids');
  }
  if (!Number.isSafeInteger(commit.time) || commit.time < 0) {
    throw new CommitFormatError('commit time must be whole seconds since the epoch');
  }
  const author = commit.author ?? DEFAULT_AUTHOR;
  if (!isValidAuthorName(author)) throw new CommitFormatError('commit author name is invalid');
  const when = `${commit.time} +0000`;
  const header =
    `tree ${commit.tree}\n` +
    (commit.parent ? `parent ${commit.parent}\n` : '') +
    `author ${author} ${EMAIL} ${when}\ncommitter ${IDENTITY} ${when}\n\n`;
  return Buffer.concat([Buffer.from(header, 'utf8'), commit.message]);
}

/**
 * Parses a commit object: `tree`, at most one `parent`, the committer time, and the message
 * bytes after the first blank line exactly. Other headers (a foreign writer's `gpgsig`,
 * `encoding`) are tolerated and ignored.
 */
export function decodeCommit(content: Uint8Array): CommitData {
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const end = bytes.indexOf('\n\n');
  if (end < 0) throw new CommitFormatError('commit has no message separator');
  const lines = bytes.toString('utf8', 0, end).split('\n');
  let tree: string | undefined;
  let parent: string | undefined;
  let time: number | undefined;
  let author: string | undefined;
  for (const line of lines) {
    if (line.startsWith('tree ')) {
      if (tree !== undefined) throw new CommitFormatError('commit has two trees');
      tree = line.slice(5);
    } else if (line.startsWith('parent ')) {
      if (parent !== undefined) throw new CommitFormatError('commit has more than one parent');
      parent = line.slice(7);
    } else if (line.startsWith('author ') && author === undefined) {
      // `author <name> <<email>> <time> <zone>`: the name is everything before ` <`.
      const match = /^author (.*?) <[^>]*> \d+ [+-]\d{4}$/.exec(line);
      if (match) author = match[1];
    } else if (line.startsWith('committer ')) {
      const match = / (\d+) [+-]\d{4}$/.exec(line);
      if (!match) throw new CommitFormatError('commit has a malformed committer line');
      time = Number(match[1]);
    }
  }
  if (
    tree === undefined ||
    !isOid(tree) ||
    (parent !== undefined && !isOid(parent)) ||
    time === undefined
  ) {
    throw new CommitFormatError('commit lacks a valid tree, parent or committer');
  }
  const commit: CommitData = { tree, message: new Uint8Array(bytes.subarray(end + 2)), time };
  if (parent !== undefined) commit.parent = parent;
  if (author !== undefined) commit.author = author;
  return commit;
}
