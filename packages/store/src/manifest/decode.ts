import { decodeCanonical } from './canonical';
import { frozen, frozenChain } from './memo';
import { type JsonNode, parseStrictJson } from './strict-json';
import {
  type CheckpointDescriptor,
  type IncrementDescriptor,
  type Manifest,
  ManifestError,
  type RetainedChain,
} from './types';
import { validateManifest } from './validate';

const U64_MAX = (1n << 64n) - 1n;
const U64_TEXT = /^(0|[1-9][0-9]*)$/;

function invalid(message: string): never {
  throw new ManifestError('INVALID_MANIFEST', message);
}

/** The members of an object node, refusing any field outside `fields` and any missing one. */
function fieldsOf(node: JsonNode, fields: readonly string[], at: string): Map<string, JsonNode> {
  if (node.type !== 'object') invalid(`${at || 'manifest'} is not an object`);
  const map = new Map(node.members);
  for (const name of map.keys()) {
    if (!fields.includes(name))
      invalid(`${at || 'manifest'} has unknown field ${JSON.stringify(name)}`);
  }
  for (const name of fields) {
    const value = map.get(name);
    if (value === undefined) invalid(`${at || 'manifest'} is missing ${name}`);
    if (value.type === 'null') invalid(`${path(at, name)} is null`);
  }
  return map;
}

const path = (at: string, name: string): string => (at ? `${at}.${name}` : name);

function u64(node: JsonNode, at: string): bigint {
  if (node.type !== 'number' || !U64_TEXT.test(node.raw)) {
    invalid(`${at} is not an unsigned integer`);
  }
  const value = BigInt(node.raw);
  if (value > U64_MAX) invalid(`${at} exceeds 64 bits`);
  return value;
}

function str(node: JsonNode, at: string): string {
  if (node.type !== 'string') invalid(`${at} is not a string`);
  return node.value;
}

function arr(node: JsonNode, at: string): JsonNode[] {
  if (node.type !== 'array') invalid(`${at} is not an array`);
  return node.items;
}

const CHECKPOINT_FIELDS = [
  'id',
  'publication',
  'throughGeneration',
  'head',
  'key',
  'sha256',
  'size',
] as const;
const INCREMENT_FIELDS = [
  'generation',
  'publication',
  'parent',
  'head',
  'key',
  'sha256',
  'size',
] as const;
const RETAINED_FIELDS = ['retiredAtGeneration', 'head', 'checkpoint', 'increments'] as const;
const MANIFEST_FIELDS = [
  'version',
  'generation',
  'head',
  'checkpoint',
  'increments',
  'retained',
] as const;

function checkpoint(node: JsonNode, at: string): CheckpointDescriptor {
  const f = fieldsOf(node, CHECKPOINT_FIELDS, at);
  return frozen({
    id: str(f.get('id')!, path(at, 'id')),
    publication: str(f.get('publication')!, path(at, 'publication')),
    throughGeneration: u64(f.get('throughGeneration')!, path(at, 'throughGeneration')),
    head: str(f.get('head')!, path(at, 'head')),
    key: str(f.get('key')!, path(at, 'key')),
    sha256: str(f.get('sha256')!, path(at, 'sha256')),
    size: u64(f.get('size')!, path(at, 'size')),
  });
}

function increment(node: JsonNode, at: string): IncrementDescriptor {
  const f = fieldsOf(node, INCREMENT_FIELDS, at);
  return frozen({
    generation: u64(f.get('generation')!, path(at, 'generation')),
    publication: str(f.get('publication')!, path(at, 'publication')),
    parent: str(f.get('parent')!, path(at, 'parent')),
    head: str(f.get('head')!, path(at, 'head')),
    key: str(f.get('key')!, path(at, 'key')),
    sha256: str(f.get('sha256')!, path(at, 'sha256')),
    size: u64(f.get('size')!, path(at, 'size')),
  });
}

function increments(node: JsonNode, at: string): IncrementDescriptor[] {
  return arr(node, at).map((item, i) => increment(item, `${at}[${i}]`));
}

function retained(node: JsonNode, at: string): RetainedChain {
  const f = fieldsOf(node, RETAINED_FIELDS, at);
  return frozenChain({
    retiredAtGeneration: u64(f.get('retiredAtGeneration')!, path(at, 'retiredAtGeneration')),
    head: str(f.get('head')!, path(at, 'head')),
    checkpoint: checkpoint(f.get('checkpoint')!, path(at, 'checkpoint')),
    increments: increments(f.get('increments')!, path(at, 'increments')),
  });
}

/**
 * Decodes and validates the bytes of `current` (contract §7). Strict at every level: invalid UTF-8,
 * malformed JSON, a duplicate field name (found on the raw text), an unknown, missing, `null` or
 * wrong-typed field, or any broken validation rule throws `ManifestError` with reason
 * `INVALID_MANIFEST`; a `version` other than 1 — checked before anything else about the
 * fields — throws `UNSUPPORTED_MANIFEST`. Every generation and size is an exact `bigint`.
 *
 * Text exactly as `encodeManifest` writes it takes a faster path with the same result
 * (`canonical.ts`); pass the manifest last decoded or written for the same store as `previous`
 * and the descriptors the two share are not built and validated again. The returned manifest
 * may share descriptor objects with `previous`; neither is to be changed in place.
 */
export function decodeManifest(bytes: Uint8Array, previous?: Manifest): Manifest {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    invalid('manifest is not valid UTF-8');
  }
  return decodeCanonical(text, previous) ?? decodeStrict(text);
}

/**
 * The strict decoder alone (what {@link decodeManifest} does with text it cannot take the fast
 * path for). Not part of the package's API: the tests compare the two paths with it.
 */
export function decodeStrict(text: string): Manifest {
  const root = parseStrictJson(text);
  if (root.type !== 'object') invalid('manifest is not an object');
  const version = root.members.find(([name]) => name === 'version')?.[1];
  if (version === undefined) invalid('manifest is missing version');
  if (version.type !== 'number' || version.raw !== '1') {
    throw new ManifestError('UNSUPPORTED_MANIFEST', 'manifest version is not 1');
  }
  const f = fieldsOf(root, MANIFEST_FIELDS, '');
  const manifest: Manifest = {
    version: 1,
    generation: u64(f.get('generation')!, 'generation'),
    head: str(f.get('head')!, 'head'),
    checkpoint: checkpoint(f.get('checkpoint')!, 'checkpoint'),
    increments: increments(f.get('increments')!, 'increments'),
    retained: arr(f.get('retained')!, 'retained').map((item, i) =>
      retained(item, `retained[${i}]`),
    ),
  };
  validateManifest(manifest);
  return manifest;
}
