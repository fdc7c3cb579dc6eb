import { randomBytes } from 'node:crypto';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A fresh UUIDv7 (RFC 9562) in lowercase canonical text: 48-bit Unix milliseconds, version 7,
 * RFC 4122 variant, 74 random bits. Written here because Node 20's `crypto.randomUUID` only
 * makes version 4, and the layout is a dozen lines.
 */
export function newUuidV7(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  const ms = BigInt(now);
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** True for a lowercase canonical UUID of version 7 with the RFC 4122 variant. */
export function isUuidV7(s: string): boolean {
  return UUID_V7.test(s);
}
