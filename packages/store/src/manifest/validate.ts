import { checkpointKey, incrementKey } from '../keys';
import { isUuidV7 } from '../uuid';
import { chainKnownValid, fieldsKnownValid, markChainValid, markFieldsValid } from './memo';
import {
  type CheckpointDescriptor,
  type IncrementDescriptor,
  type Manifest,
  ManifestError,
  type RetainedChain,
} from './types';

const U64_MAX = (1n << 64n) - 1n;
const OID = /^[0-9a-f]{40}$/;
const SHA256 = /^[0-9a-f]{64}$/;

function invalid(message: string): never {
  throw new ManifestError('INVALID_MANIFEST', message);
}

function checkU64(value: bigint, at: string, min: bigint): void {
  if (typeof value !== 'bigint' || value < min || value > U64_MAX) {
    invalid(`${at} is out of range`);
  }
}

function checkOid(value: string, at: string): void {
  if (!OID.test(value)) invalid(`${at} is not a 40-hex object id`);
}

function checkPackFields(d: { sha256: string; size: bigint }, at: string): void {
  if (!SHA256.test(d.sha256)) invalid(`${at}.sha256 is not 64 lowercase hex`);
  checkU64(d.size, `${at}.size`, 1n);
}

/** A JSON path, or what builds it when a message needs it. */
type At = string | (() => string);
const path = (at: At): string => (typeof at === 'string' ? at : at());

/** Bookkeeping shared by every chain of one manifest: unique keys, ids and publication heads. */
class Uniqueness {
  private readonly keys = new Set<string>();
  private readonly checkpointIds = new Set<string>();
  private readonly publicationHeads = new Map<string, string>();

  key(key: string, at: At): void {
    if (this.keys.has(key)) invalid(`${path(at)}.key is used twice`);
    this.keys.add(key);
  }
  checkpointId(id: string, at: string): void {
    if (this.checkpointIds.has(id)) invalid(`${at}.id is used twice`);
    this.checkpointIds.add(id);
  }
  publication(publication: string, head: string, at: At): void {
    const bound = this.publicationHeads.get(publication);
    if (bound !== undefined && bound !== head) {
      invalid(`${path(at)}.publication is bound to two different heads`);
    }
    this.publicationHeads.set(publication, head);
  }
}

/**
 * The rules on a checkpoint's own fields run once per frozen descriptor (see `memo.ts`); the
 * uniqueness rules, which relate it to the rest of the manifest, run every time.
 */
function checkCheckpoint(c: CheckpointDescriptor, at: string, seen: Uniqueness): void {
  if (!fieldsKnownValid(c)) {
    if (!isUuidV7(c.id)) invalid(`${at}.id is not a UUIDv7`);
    if (!isUuidV7(c.publication)) invalid(`${at}.publication is not a UUIDv7`);
    checkU64(c.throughGeneration, `${at}.throughGeneration`, 1n);
    checkOid(c.head, `${at}.head`);
    if (c.key !== checkpointKey(c.throughGeneration, c.id)) {
      invalid(`${at}.key does not match packs/checkpoints/<throughGeneration>-<id>.pack`);
    }
    checkPackFields(c, at);
    markFieldsValid(c);
  }
  seen.key(c.key, at);
  seen.checkpointId(c.id, at);
  seen.publication(c.publication, c.head, at);
}

/**
 * Like {@link checkCheckpoint}: the rules on the increment's own fields once per frozen
 * descriptor, its place in the chain and the uniqueness rules every time, in the same order
 * (so the first broken rule, and its message, are the same either way). `chainAt` and `index`
 * make its JSON path, built only for a message.
 */
function checkIncrement(
  inc: IncrementDescriptor,
  chainAt: string,
  index: number,
  expected: { generation: bigint; parent: string },
  seen: Uniqueness,
): void {
  const at = (): string => `${chainAt}increments[${index}]`;
  const known = fieldsKnownValid(inc);
  if (!known) checkU64(inc.generation, `${at()}.generation`, 1n);
  if (inc.generation !== expected.generation) {
    invalid(`${at()}.generation is not the next chain position`);
  }
  if (!known) {
    if (!isUuidV7(inc.publication)) invalid(`${at()}.publication is not a UUIDv7`);
    checkOid(inc.parent, `${at()}.parent`);
    checkOid(inc.head, `${at()}.head`);
  }
  if (inc.parent !== expected.parent) invalid(`${at()}.parent is not the previous head`);
  if (!known) {
    if (inc.key !== incrementKey(inc.generation, inc.publication)) {
      invalid(`${at()}.key does not match packs/increments/<generation>-<publication>.pack`);
    }
    checkPackFields(inc, at());
    markFieldsValid(inc);
  }
  seen.key(inc.key, at);
  seen.publication(inc.publication, inc.head, at);
}

/** Validates one checkpoint + increments chain; returns its last head and chain position. */
function checkChain(
  checkpoint: CheckpointDescriptor,
  increments: IncrementDescriptor[],
  at: string,
  seen: Uniqueness,
): { head: string; position: bigint } {
  checkCheckpoint(checkpoint, `${at}checkpoint`, seen);
  let head = checkpoint.head;
  let position = checkpoint.throughGeneration;
  increments.forEach((inc, i) => {
    checkIncrement(inc, at, i, { generation: position + 1n, parent: head }, seen);
    head = inc.head;
    position = inc.generation;
  });
  return { head, position };
}

/**
 * Checks every rule of contract §7 on a manifest: generation ≥ 1; 40-hex object ids and 64-hex
 * SHA-256; UUIDv7 ids; pack size > 0; keys that match their grammar; all keys and checkpoint
 * ids unique; a publication id bound to one head only; throughGeneration ≤ generation;
 * increments at consecutive chain positions after the cutoff, each parent the previous head;
 * top-level head = the chain's last head; each retained entry an independent valid chain,
 * ordered by strictly decreasing retiredAtGeneration, whose head is its last head and whose
 * retiredAtGeneration is above its last chain position and not above the top-level generation.
 * Throws `ManifestError` (`INVALID_MANIFEST`, or `UNSUPPORTED_MANIFEST` for a version ≠ 1).
 */
export function validateManifest(m: Manifest): void {
  if (m.version !== 1) throw new ManifestError('UNSUPPORTED_MANIFEST', 'manifest version is not 1');
  checkU64(m.generation, 'generation', 1n);
  checkOid(m.head, 'head');
  const seen = new Uniqueness();
  const active = checkChain(m.checkpoint, m.increments, '', seen);
  if (m.checkpoint.throughGeneration > m.generation) {
    invalid('checkpoint.throughGeneration is above generation');
  }
  if (active.position > m.generation) invalid('increments run past generation');
  if (m.head !== active.head) invalid('head is not the last head of the chain');
  let previousRetirement: bigint | undefined;
  m.retained.forEach((r, i) => {
    const at = `retained[${i}]`;
    if (chainKnownValid(r)) rememberChain(r, `${at}.`, seen);
    else checkRetainedChain(r, at, seen);
    if (r.retiredAtGeneration > m.generation) {
      invalid(`${at}.retiredAtGeneration is above generation`);
    }
    if (previousRetirement !== undefined && r.retiredAtGeneration >= previousRetirement) {
      invalid(`${at}.retiredAtGeneration does not strictly decrease`);
    }
    previousRetirement = r.retiredAtGeneration;
  });
}

/** Every rule within one retained chain, with the uniqueness of its keys, ids and publications. */
function checkRetainedChain(r: RetainedChain, at: string, seen: Uniqueness): void {
  checkU64(r.retiredAtGeneration, `${at}.retiredAtGeneration`, 1n);
  checkOid(r.head, `${at}.head`);
  const chain = checkChain(r.checkpoint, r.increments, `${at}.`, seen);
  if (r.head !== chain.head) invalid(`${at}.head is not the last head of its chain`);
  if (r.retiredAtGeneration <= chain.position) {
    invalid(`${at}.retiredAtGeneration is not above its last chain position`);
  }
  markChainValid(r);
}

/**
 * A retained chain whose own rules are known to hold ({@link chainKnownValid}): only the
 * uniqueness rules, which relate it to the rest of the manifest, in {@link checkChain}'s order.
 */
function rememberChain(r: RetainedChain, chainAt: string, seen: Uniqueness): void {
  const c = r.checkpoint;
  seen.key(c.key, `${chainAt}checkpoint`);
  seen.checkpointId(c.id, `${chainAt}checkpoint`);
  seen.publication(c.publication, c.head, `${chainAt}checkpoint`);
  r.increments.forEach((inc, index) => {
    const at = (): string => `${chainAt}increments[${index}]`;
    seen.key(inc.key, at);
    seen.publication(inc.publication, inc.head, at);
  });
}
