// With the `u` flag a surrogate pair is one code point, so this matches only lone
// surrogates: text that has no UTF-8 encoding (contract §2 counts it as invalid UTF-8).
const LONE_SURROGATE = /\p{Cs}/u;

/** True when `text` has a UTF-8 encoding (no lone surrogate). */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** UTF-8 byte length of well-formed text. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
