import { ManifestError } from './types';

/**
 * A JSON value that keeps what `JSON.parse` loses: numbers as their exact source text (so a
 * u64 above 2^53 survives) and object members in order (so duplicates can be refused).
 */
export type JsonNode =
  | { type: 'object'; members: [string, JsonNode][] }
  | { type: 'array'; items: JsonNode[] }
  | { type: 'string'; value: string }
  | { type: 'number'; raw: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'null' };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// A JSON string token: no raw control characters, only the escapes RFC 8259 allows.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

const CONTROL = /[\u0000-\u001f]/;

function invalid(message: string): never {
  throw new ManifestError('INVALID_MANIFEST', message);
}

/**
 * Parses RFC 8259 JSON text strictly into a {@link JsonNode}, refusing a duplicate member name
 * in any object before any value is built from it. Hand-written because neither `JSON.parse`
 * (which silently keeps the last duplicate and rounds large integers) nor a reviver on Node 20
 * (no source-text access) can do either.
 */
export function parseStrictJson(text: string): JsonNode {
  let pos = 0;
  const skip = (): void => {
    const c = text.charCodeAt(pos);
    // Compact JSON (every manifest we write) has no whitespace: skip the regex.
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
    WHITESPACE.lastIndex = pos;
    WHITESPACE.exec(text);
    pos = WHITESPACE.lastIndex;
  };
  const token = (re: RegExp): string | undefined => {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) return undefined;
    pos = re.lastIndex;
    return m[0];
  };
  /**
   * The string token at `pos` (which holds `"`). Without a backslash the text up to the next
   * quote is the value, once it holds no control character; that is most of a manifest and
   * much faster than the token regex. Escapes go through the regex and `JSON.parse`.
   */
  const string = (): string => {
    const end = text.indexOf('"', pos + 1);
    if (end < 0) invalid(`malformed string at offset ${pos}`);
    const body = text.slice(pos + 1, end);
    if (!body.includes('\\')) {
      if (CONTROL.test(body)) invalid(`malformed string at offset ${pos}`);
      pos = end + 1;
      return body;
    }
    const raw = token(STRING) ?? invalid(`malformed string at offset ${pos}`);
    return JSON.parse(raw) as string;
  };
  const expect = (ch: string): void => {
    if (text[pos] !== ch) invalid(`malformed JSON at offset ${pos}`);
    pos++;
  };

  const value = (depth: number): JsonNode => {
    if (depth > 16) invalid('JSON nested too deeply');
    skip();
    const ch = text[pos];
    if (ch === '{') {
      pos++;
      const members: [string, JsonNode][] = [];
      const seen = new Set<string>();
      skip();
      if (text[pos] === '}') {
        pos++;
        return { type: 'object', members };
      }
      for (;;) {
        skip();
        if (text[pos] !== '"') invalid(`malformed JSON at offset ${pos}`);
        const name = string();
        if (seen.has(name)) invalid(`duplicate field name ${JSON.stringify(name)}`);
        seen.add(name);
        skip();
        expect(':');
        members.push([name, value(depth + 1)]);
        skip();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        expect('}');
        return { type: 'object', members };
      }
    }
    if (ch === '[') {
      pos++;
      const items: JsonNode[] = [];
      skip();
      if (text[pos] === ']') {
        pos++;
        return { type: 'array', items };
      }
      for (;;) {
        items.push(value(depth + 1));
        skip();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        expect(']');
        return { type: 'array', items };
      }
    }
    if (ch === '"') return { type: 'string', value: string() };
    if (text.startsWith('true', pos)) {
      pos += 4;
      return { type: 'boolean', value: true };
    }
    if (text.startsWith('false', pos)) {
      pos += 5;
      return { type: 'boolean', value: false };
    }
    if (text.startsWith('null', pos)) {
      pos += 4;
      return { type: 'null' };
    }
    const raw = token(NUMBER) ?? invalid(`malformed JSON at offset ${pos}`);
    return { type: 'number', raw };
  };

  const root = value(0);
  skip();
  if (pos !== text.length) invalid(`trailing data at offset ${pos}`);
  return root;
}
