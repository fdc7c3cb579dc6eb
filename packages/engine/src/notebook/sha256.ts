import { createHash } from 'node:crypto';

/** Lower-case hex SHA-256 of `bytes`: the checksum a pack descriptor carries (docs/contract.md §7). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
