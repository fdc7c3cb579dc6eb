/**
 * Orders strings by their UTF-8 bytes, as SPEC §2 requires for every list of paths.
 * JavaScript's default order compares UTF-16 code units, which differs for characters
 * above U+FFFF versus U+E000–U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
