import { StateError } from './errors';

/** The record of one L's accepted baseline (contract §10), `state.json` version 1. */
export interface StateV1 {
  version: 1;
  /** The storage identity P belongs to (the store's `identity`). */
  identity: string;
  /** The accepted remote generation the baseline came from. */
  remoteGeneration: bigint;
  /** The baseline commit (40 lowercase hex), or `''` while the remote has no head yet. */
  baselineHead: string;
  /** The baseline tree (40 lowercase hex). */
  baselineTree: string;
  /** Set before any rewrite of L, cleared once L and the baseline are durable. */
  recoveryRequired: boolean;
}

const FIELDS = [
  'version',
  'identity',
  'remoteGeneration',
  'baselineHead',
  'baselineTree',
  'recoveryRequired',
] as const;
const OID = /^[0-9a-f]{40}$/;
const UNSIGNED = /^(0|[1-9][0-9]*)$/;
const MAX_GENERATION = 2n ** 63n - 1n;

/** Encodes `state` as compact JSON with the fields in their fixed order. */
export function encodeState(state: StateV1): string {
  validate(state);
  return (
    `{"version":1,"identity":${JSON.stringify(state.identity)},` +
    `"remoteGeneration":${state.remoteGeneration},` +
    `"baselineHead":${JSON.stringify(state.baselineHead)},` +
    `"baselineTree":${JSON.stringify(state.baselineTree)},` +
    `"recoveryRequired":${state.recoveryRequired}}`
  );
}

/**
 * Decodes `state.json` strictly: one JSON object with exactly the six fields, in order, each
 * of its type; unknown, duplicate, missing, null or wrong-typed fields throw
 * {@link StateError}. `remoteGeneration` is read from its digits (no float rounding).
 */
export function decodeState(text: string): StateV1 {
  const members = parseFlatObject(text);
  const seen = new Set<string>();
  for (const { key, token } of members) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      throw new StateError('unknown-field', `unknown field "${key}"`);
    }
    if (seen.has(key)) throw new StateError('duplicate-field', `duplicate field "${key}"`);
    seen.add(key);
    if (token.kind === 'null') throw new StateError('null-field', `"${key}" is null`);
  }
  for (const field of FIELDS) {
    if (!seen.has(field)) throw new StateError('missing-field', `missing field "${field}"`);
  }
  members.forEach(({ key }, index) => {
    if (key !== FIELDS[index]) throw new StateError('field-order', `"${key}" out of order`);
  });
  const get = (key: string) => members.find((member) => member.key === key)!.token;
  const version = get('version');
  if (version.kind !== 'number') throw wrongType('version');
  if (version.text !== '1') {
    throw new StateError('unsupported-version', `unsupported version ${version.text}`);
  }
  const generation = get('remoteGeneration');
  if (generation.kind !== 'number') throw wrongType('remoteGeneration');
  if (!UNSIGNED.test(generation.text)) {
    throw new StateError('invalid-value', 'remoteGeneration is not an unsigned integer');
  }
  const state: StateV1 = {
    version: 1,
    identity: stringField(get('identity'), 'identity'),
    remoteGeneration: BigInt(generation.text),
    baselineHead: stringField(get('baselineHead'), 'baselineHead'),
    baselineTree: stringField(get('baselineTree'), 'baselineTree'),
    recoveryRequired: booleanField(get('recoveryRequired'), 'recoveryRequired'),
  };
  validate(state);
  return state;
}

function validate(state: StateV1): void {
  if (state.version !== 1) throw new StateError('unsupported-version', 'version must be 1');
  if (typeof state.identity !== 'string' || state.identity === '') {
    throw new StateError('invalid-value', 'identity must be a non-empty string');
  }
  if (state.remoteGeneration < 0n || state.remoteGeneration > MAX_GENERATION) {
    throw new StateError('invalid-value', 'remoteGeneration out of range');
  }
  if (state.baselineHead !== '' && !OID.test(state.baselineHead)) {
    throw new StateError('invalid-value', 'baselineHead is not an object id');
  }
  if (!OID.test(state.baselineTree)) {
    throw new StateError('invalid-value', 'baselineTree is not an object id');
  }
  if (typeof state.recoveryRequired !== 'boolean') throw wrongType('recoveryRequired');
}

function wrongType(key: string): StateError {
  return new StateError('wrong-type', `"${key}" has the wrong type`);
}

function stringField(token: Token, key: string): string {
  if (token.kind !== 'string') throw wrongType(key);
  return token.value;
}

function booleanField(token: Token, key: string): boolean {
  if (token.kind !== 'boolean') throw wrongType(key);
  return token.value;
}

type Token =
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'nested' };

// JSON.parse keeps the last of duplicate keys and rounds large numbers, so the flat object
// is tokenised here; JSON.parse still validates each string literal and the whole text.
const MEMBER =
  /\s*("(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")\s*:\s*("(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|[[{])/y;

function parseFlatObject(text: string): { key: string; token: Token }[] {
  try {
    JSON.parse(text);
  } catch {
    throw new StateError('syntax', 'not JSON');
  }
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) throw new StateError('wrong-type', 'not a JSON object');
  const members: { key: string; token: Token }[] = [];
  let index = 1;
  if (/^\{\s*\}$/.test(trimmed)) return members;
  for (;;) {
    MEMBER.lastIndex = index;
    const match = MEMBER.exec(trimmed);
    if (!match) throw new StateError('syntax', 'unexpected content');
    const key = JSON.parse(match[1]!) as string;
    const raw = match[2]!;
    members.push({ key, token: tokenOf(raw) });
    index =
      raw === '[' || raw === '{' ? skipNested(trimmed, MEMBER.lastIndex - 1) : MEMBER.lastIndex;
    const rest = /\s*([,}])/y;
    rest.lastIndex = index;
    const separator = rest.exec(trimmed);
    if (!separator) throw new StateError('syntax', 'unexpected content');
    index = rest.lastIndex;
    if (separator[1] === '}') return members;
  }
}

/** The index after the array or object opening at `start` (the text is valid JSON). */
function skipNested(text: string, start: number): number {
  let depth = 0;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (char === '"') {
      index += 1;
      while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
    } else if (char === '[' || char === '{') {
      depth += 1;
    } else if (char === ']' || char === '}') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  throw new StateError('syntax', 'unterminated value');
}

function tokenOf(raw: string): Token {
  if (raw.startsWith('"')) return { kind: 'string', value: JSON.parse(raw) as string };
  if (raw === 'true' || raw === 'false') return { kind: 'boolean', value: raw === 'true' };
  if (raw === 'null') return { kind: 'null' };
  if (raw === '[' || raw === '{') return { kind: 'nested' };
  return { kind: 'number', text: raw };
}
