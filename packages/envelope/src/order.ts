/**
 * Orders strings by their UTF-8 bytes, as contract §2 requires for every list of paths.
 * JavaScript's default order compares UTF-16 code units, which differs for characters
 * above U+FFFF versus U+E000–U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

// A string without surrogate code units compares the same by UTF-16 code units, by code
// points and by UTF-8 bytes; only a surrogate (a code point above U+FFFF) against U+E000–U+FFFF
// orders differently.
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Sorts `items` by the UTF-8 bytes of `key(item)` (contract §2's order). Keys without surrogates
 * (nearly every notebook) are compared as strings; otherwise each key is encoded once, since a
 * comparator that encodes on every comparison allocates two buffers per comparison.
 */
export function sortByUtf8<T>(items: Iterable<T>, key: (item: T) => string): T[] {
  const keyed = Array.from(items, (item) => ({ item, key: key(item) }));
  if (keyed.some((entry) => SURROGATE.test(entry.key))) {
    return keyed
      .map(({ item, key: text }) => ({ item, bytes: Buffer.from(text, 'utf8') }))
      .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
      .map(({ item }) => item);
  }
  return keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(({ item }) => item);
}
