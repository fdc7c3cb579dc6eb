/**
 * The group-commit messages (docs/engine.md, "Group commit") and their strict validation: a
 * message that does not validate is treated as malformed and drops its sender, never trusted.
 */
import { isUtf8 } from 'node:buffer';
import type { FileStat } from '@slivingdoc/envelope';
import { isValidAuthorName } from '@slivingdoc/merge';
import { checkNotebookPath } from '@slivingdoc/policy';

/** A member's change as the holder merges it: its A→L change with the blobs it needs. */
export interface MemberChange {
  /** The member's baseline A (generation 0 and head '' = none). */
  base: { generation: bigint; head: string };
  /** Every changed path: the new blob id, or `null` for a deletion. */
  changes: [path: string, oid: string | null][];
  /** The content of every new blob id in `changes`. */
  blobs: Map<string, Uint8Array>;
  /** The member's commit message, byte for byte. */
  message: Uint8Array;
  /** The member's author name (contract §9; `slivingdoc` when absent). */
  author: string | undefined;
}

/** What the holder tells a member, in this order: taken, then prepared (0+), then one verdict. */
export type HolderMessage =
  | { t: 'taken' }
  | { t: 'withdrawn' }
  | ({ t: 'prepared' } & PreparedWire)
  | { t: 'accepted'; generation: string; head: string; files: FileStat[] }
  | { t: 'excluded'; reason: ExclusionReason }
  | { t: 'unproven' };

/**
 * Sent to every member of a group before its CAS: what the member needs to find out from the
 * store alone whether the group landed (its publication id, the chain position it targets, the
 * ETag it is conditioned on), and what it then accepts (the manifest generation the CAS
 * produces, the group's head and tree, the member's own commit in the chain). The member
 * records it as its publication input and answers `recorded` before the holder sends the CAS.
 */
export interface PreparedWire {
  publication: string;
  position: string;
  conditionedOn: string | null;
  generation: string;
  head: string;
  tree: string;
  commit: string;
}

/**
 * Why a member was left out: `conflict` (with R or an earlier member) and `solo` (anything
 * the holder cannot merge for it) = attempt alone; `later` = the turn ended before its change
 * was taken, join the next one.
 */
export type ExclusionReason = 'conflict' | 'solo' | 'later';

const OID = /^[0-9a-f]{40}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;

/** The wire form of a member's change. */
export function encodeJoin(change: MemberChange): object {
  return {
    t: 'join',
    base: { generation: String(change.base.generation), head: change.base.head },
    changes: change.changes,
    blobs: [...change.blobs].map(([oid, bytes]) => [oid, Buffer.from(bytes).toString('base64')]),
    message: Buffer.from(change.message).toString('base64'),
    ...(change.author === undefined ? {} : { author: change.author }),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

/** Decodes a member's `join`; `undefined` when anything about it is malformed. */
function decodeJoin(raw: Record<string, unknown>): MemberChange | undefined {
  if (raw.t !== 'join' || !onlyKeys(raw, ['t', 'base', 'changes', 'blobs', 'message', 'author']))
    return undefined;
  const { base, changes, blobs, message, author } = raw;
  if (!isRecord(base) || !onlyKeys(base, ['generation', 'head'])) return undefined;
  if (typeof base.generation !== 'string' || !DECIMAL.test(base.generation)) return undefined;
  if (typeof base.head !== 'string' || !(base.head === '' || OID.test(base.head))) return undefined;
  if (!Array.isArray(changes) || !Array.isArray(blobs)) return undefined;
  if (typeof message !== 'string') return undefined;
  if (author !== undefined && (typeof author !== 'string' || !isValidAuthorName(author)))
    return undefined;
  const decoded: MemberChange = {
    base: { generation: BigInt(base.generation), head: base.head },
    changes: [],
    blobs: new Map(),
    message: Buffer.from(message, 'base64'),
    author,
  };
  if (!isUtf8(decoded.message) || decoded.message.byteLength === 0) return undefined;
  const paths = new Set<string>();
  for (const change of changes) {
    if (!Array.isArray(change) || change.length !== 2) return undefined;
    const [path, oid] = change as unknown[];
    if (typeof path !== 'string' || checkNotebookPath(path) !== undefined || paths.has(path))
      return undefined;
    if (oid !== null && (typeof oid !== 'string' || !OID.test(oid))) return undefined;
    paths.add(path);
    decoded.changes.push([path, oid]);
  }
  for (const blob of blobs) {
    if (!Array.isArray(blob) || blob.length !== 2) return undefined;
    const [oid, content] = blob as unknown[];
    if (typeof oid !== 'string' || !OID.test(oid) || typeof content !== 'string') return undefined;
    const bytes = Buffer.from(content, 'base64');
    // Notebook text only (contract §4), as a scan would have accepted it.
    if (!isUtf8(bytes) || bytes.includes(0)) return undefined;
    decoded.blobs.set(oid, bytes);
  }
  for (const [, oid] of decoded.changes)
    if (oid !== null && !decoded.blobs.has(oid)) return undefined;
  return decoded;
}

/**
 * What a member tells the holder: its change (`join`, first and only then), `withdraw`, and
 * `recorded` (its acknowledgement of one `prepared`: its publication input is in its P).
 */
export type MemberMessage =
  | { t: 'join'; change: MemberChange }
  | { t: 'withdraw' }
  | { t: 'recorded'; publication: string };

/** The wire form of a member's message. */
export function encodeMemberMessage(message: MemberMessage): object {
  return message.t === 'join' ? encodeJoin(message.change) : message;
}

/** Decodes a member's message; `undefined` when malformed. */
export function decodeMemberMessage(raw: Record<string, unknown>): MemberMessage | undefined {
  if (raw.t === 'join') {
    const change = decodeJoin(raw);
    return change === undefined ? undefined : { t: 'join', change };
  }
  if (raw.t === 'withdraw') return onlyKeys(raw, ['t']) ? { t: 'withdraw' } : undefined;
  if (raw.t !== 'recorded' || !onlyKeys(raw, ['t', 'publication'])) return undefined;
  const { publication } = raw;
  return typeof publication === 'string' && publication.length > 0
    ? { t: 'recorded', publication }
    : undefined;
}

function isFileStat(value: unknown): value is FileStat {
  return (
    isRecord(value) &&
    onlyKeys(value, ['path', 'insertions', 'deletions']) &&
    typeof value.path === 'string' &&
    Number.isSafeInteger(value.insertions) &&
    Number.isSafeInteger(value.deletions)
  );
}

/** Decodes what the holder said; `undefined` when malformed (the member treats it as a drop). */
export function decodeHolderMessage(raw: Record<string, unknown>): HolderMessage | undefined {
  switch (raw.t) {
    case 'taken':
    case 'withdrawn':
    case 'unproven':
      return onlyKeys(raw, ['t']) ? { t: raw.t } : undefined;
    case 'prepared': {
      const { publication, position, conditionedOn, generation, head, tree, commit } = raw;
      const keys = [
        't',
        'publication',
        'position',
        'conditionedOn',
        'generation',
        'head',
        'tree',
        'commit',
      ];
      if (!onlyKeys(raw, keys)) return undefined;
      if (typeof publication !== 'string' || publication.length === 0) return undefined;
      if (typeof position !== 'string' || !DECIMAL.test(position)) return undefined;
      if (conditionedOn !== null && typeof conditionedOn !== 'string') return undefined;
      if (typeof generation !== 'string' || !DECIMAL.test(generation)) return undefined;
      if (typeof head !== 'string' || !OID.test(head)) return undefined;
      if (typeof tree !== 'string' || !OID.test(tree)) return undefined;
      if (typeof commit !== 'string' || !OID.test(commit)) return undefined;
      return {
        t: 'prepared',
        publication,
        position,
        conditionedOn,
        generation,
        head,
        tree,
        commit,
      };
    }
    case 'accepted': {
      const { generation, head, files } = raw;
      if (!onlyKeys(raw, ['t', 'generation', 'head', 'files'])) return undefined;
      if (typeof generation !== 'string' || !DECIMAL.test(generation)) return undefined;
      if (typeof head !== 'string' || !OID.test(head)) return undefined;
      if (!Array.isArray(files) || !files.every(isFileStat)) return undefined;
      return { t: 'accepted', generation, head, files };
    }
    case 'excluded': {
      const { reason } = raw;
      if (!onlyKeys(raw, ['t', 'reason'])) return undefined;
      if (reason !== 'conflict' && reason !== 'solo' && reason !== 'later') return undefined;
      return { t: 'excluded', reason };
    }
    default:
      return undefined;
  }
}
