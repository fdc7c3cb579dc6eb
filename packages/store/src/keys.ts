/** The manifest's key, relative to the store prefix. */
export const CURRENT_KEY = 'current';

/** The only namespace `list` may enumerate (contract §7: reading state never lists). */
export const PACKS_NAMESPACE = 'packs/';

/**
 * The notebook's review setting (docs/review.md): a conditional key beside `current`, outside
 * the notebook's state, which a reader of contract §7 alone never reads.
 */
export const REVIEW_KEY = 'review';

/** The namespace of the proposals (docs/review.md); listed only by review commands. */
export const PROPOSALS_NAMESPACE = 'proposals/';

/** The namespaces `list` accepts. */
export type ListNamespace = typeof PACKS_NAMESPACE | typeof PROPOSALS_NAMESPACE;

const U64_TEXT = '(0|[1-9][0-9]{0,19})';
const UUID_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
const CHECKPOINT_KEY = new RegExp(`^packs/checkpoints/${U64_TEXT}-(${UUID_TEXT})\\.pack$`);
const INCREMENT_KEY = new RegExp(`^packs/increments/${U64_TEXT}-(${UUID_TEXT})\\.pack$`);
const PROBE_KEY = new RegExp(`^probe/${UUID_TEXT}$`);
/** A proposal id: the directory's 16-hex participant prefix and its sequence number. */
const PROPOSAL_ID_TEXT = '[0-9a-f]{16}-[1-9][0-9]{0,8}';
const PROPOSAL_ID = new RegExp(`^${PROPOSAL_ID_TEXT}$`);
const PROPOSAL_KEY = new RegExp(`^proposals/${PROPOSAL_ID_TEXT}$`);
const U64_MAX = (1n << 64n) - 1n;

/** Key of a closed full-state pack: `packs/checkpoints/<throughGeneration>-<id>.pack`. */
export function checkpointKey(throughGeneration: bigint, id: string): string {
  return `packs/checkpoints/${throughGeneration}-${id}.pack`;
}

/** Key of one publication's pack: `packs/increments/<generation>-<publication>.pack`. */
export function incrementKey(generation: bigint, publication: string): string {
  return `packs/increments/${generation}-${publication}.pack`;
}

/** Key of a transient compatibility-probe object: `probe/<uuidv7>`. */
export function probeKey(id: string): string {
  return `probe/${id}`;
}

/** Key of one proposal record: `proposals/<id>`. */
export function proposalKey(id: string): string {
  return `proposals/${id}`;
}

/** True for a proposal id of the grammar (`<16 hex>-<sequence>`). */
export function isProposalId(id: string): boolean {
  return PROPOSAL_ID.test(id);
}

/** What a relative key names, or `undefined` when it is outside the grammar. */
export type KeyKind = 'current' | 'checkpoint' | 'increment' | 'probe' | 'review' | 'proposal';

/** Classifies a relative key by the contract §7 grammar (numbers must fit in 64 bits). */
export function keyKind(key: string): KeyKind | undefined {
  if (key === CURRENT_KEY) return 'current';
  if (key === REVIEW_KEY) return 'review';
  if (PROBE_KEY.test(key)) return 'probe';
  if (PROPOSAL_KEY.test(key)) return 'proposal';
  const pack = CHECKPOINT_KEY.exec(key) ?? INCREMENT_KEY.exec(key);
  if (!pack || BigInt(pack[1]!) > U64_MAX) return undefined;
  return key.startsWith('packs/checkpoints/') ? 'checkpoint' : 'increment';
}

/** True for a pack key (checkpoint or increment) of the grammar. */
export function isPackKey(key: string): boolean {
  const kind = keyKind(key);
  return kind === 'checkpoint' || kind === 'increment';
}

/** True for a key that stores may write conditionally (`current`, `review`, a probe or a proposal). */
export function isConditionalKey(key: string): boolean {
  const kind = keyKind(key);
  return kind === 'current' || kind === 'probe' || kind === 'review' || kind === 'proposal';
}

/** True for a key `deleteMany` may remove: pack, probe and proposal keys, never `current` or `review`. */
export function isDeletableKey(key: string): boolean {
  const kind = keyKind(key);
  return kind !== undefined && kind !== 'current' && kind !== 'review';
}

/** True for a key `list(namespace)` reports. */
export function isListedKey(namespace: ListNamespace, key: string): boolean {
  return namespace === PACKS_NAMESPACE ? isPackKey(key) : keyKind(key) === 'proposal';
}

/** Throws a `TypeError` unless `namespace` is one `list` accepts. */
export function assertListNamespace(namespace: string): asserts namespace is ListNamespace {
  if (namespace !== PACKS_NAMESPACE && namespace !== PROPOSALS_NAMESPACE) {
    throw new TypeError('list: only the pack or proposal namespace');
  }
}

/** Parses a pack key into its number and UUID, or `undefined` when it is not one. */
export function parsePackKey(
  key: string,
): { kind: 'checkpoint' | 'increment'; number: bigint; id: string } | undefined {
  const kind = keyKind(key);
  if (kind !== 'checkpoint' && kind !== 'increment') return undefined;
  const match = (kind === 'checkpoint' ? CHECKPOINT_KEY : INCREMENT_KEY).exec(key)!;
  return { kind, number: BigInt(match[1]!), id: match[2]! };
}

/**
 * Why a store prefix is invalid, or `undefined` when it is valid. Empty selects the bucket root;
 * otherwise no leading or trailing `/`, no empty, `.` or `..` segment, no backslash (contract §7).
 */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix === '') return undefined;
  if (prefix.includes('\\')) return 'contains a backslash';
  if (prefix.startsWith('/') || prefix.endsWith('/')) return 'starts or ends with /';
  if (prefix.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    return 'has an empty, . or .. segment';
  }
  return undefined;
}

/** Throws a `TypeError` naming the problem when `prefix` is invalid. */
export function assertPrefix(prefix: string): void {
  const problem = prefixProblem(prefix);
  if (problem) throw new TypeError(`invalid store prefix: ${problem}`);
}

/** The full object key of a relative key under `prefix`. */
export function fullKey(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}/${key}`;
}

/** Throws a `TypeError` unless `key` is a relative key of the grammar accepted by `accept`. */
export function assertKey(key: string, accept: (key: string) => boolean, use: string): void {
  if (!accept(key)) throw new TypeError(`${use}: key outside the store's grammar`);
}
