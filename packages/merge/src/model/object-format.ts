import { createHash } from 'node:crypto';

/** A git object id: 40 lowercase hex digits (SHA-1). */
export type Oid = string;

/** The object types this engine stores. Tags are never written or accepted. */
export type ObjectType = 'blob' | 'tree' | 'commit';

/** One whole object: its type and its content (without git's `<type> <size>\0` header). */
export interface GitObject {
  type: ObjectType;
  content: Uint8Array;
}

const OID_PATTERN = /^[0-9a-f]{40}$/;

/** True when `value` is 40 lowercase hex digits. */
export function isOid(value: string): boolean {
  return OID_PATTERN.test(value);
}

/** The header git puts before an object's content for hashing and in a loose file. */
function frameHeader(type: ObjectType, content: Uint8Array): string {
  return `${type} ${content.byteLength}\0`;
}

/** Git's framing of an object as a loose file holds it (before zlib): `<type> <size>\0<content>`. */
export function frameObject(type: ObjectType, content: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(frameHeader(type, content)), content]);
}

/** Git's object id of `content` stored as `type`: SHA-1 over `<type> <size>\0<content>`. */
export function hashObject(type: ObjectType, content: Uint8Array): Oid {
  return createHash('sha1').update(frameHeader(type, content)).update(content).digest('hex');
}

/** Git's SHA-1 of a blob holding `content`, computed without storing anything. */
export function blobOid(content: Uint8Array): Oid {
  return hashObject('blob', content);
}
