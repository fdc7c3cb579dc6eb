import { StateError } from './errors';

/** One accepted state as a target record names it (the fields of `state.json`'s baseline). */
export interface TargetBaseline {
  generation: bigint;
  /** 40 lowercase hex, or `''` when there is no remote head. */
  head: string;
  /** 40 lowercase hex. */
  tree: string;
}

/**
 * One rewrite of L: the baseline it records when it finishes, and what it writes. With `input`,
 * a publication attempt instead (recorded just before its compare-and-swap): `next` is its
 * proposal and `changes` the L it merged, as differences from `previous`'s tree; once the
 * proposal is in the store, those files are published, not edits.
 */
export interface TargetRewrite {
  next: TargetBaseline;
  /** How the target differs from `next`'s tree (path → blob id, `null` = absent). */
  changes: Map<string, string | null>;
  /** True for a publication attempt's input (see above). */
  input?: boolean;
}

/**
 * What the rewrites of L under one recovery flag were writing (contract §10 "records its target"),
 * `target.json` version 1: each rewrite appends its target before it raises (or keeps) the flag,
 * so a repair after a kill can tell the files any of them already wrote from the caller's edits
 * (a repair killed in turn leaves files of both). A target is `next`'s tree with `changes`
 * applied, which keeps the record small: it holds only the caller's unpublished edits and
 * conflict results, never the whole notebook.
 */
export interface RewriteTarget {
  /** The baseline the recovery flag keeps (the one L was based on before the first rewrite). */
  previous: TargetBaseline;
  /** The rewrites since the flag went up, oldest first. */
  rewrites: TargetRewrite[];
}

const OID = /^[0-9a-f]{40}$/;
const UNSIGNED = /^(0|[1-9][0-9]*)$/;

function encodeBaseline(b: TargetBaseline): unknown {
  return { generation: b.generation.toString(), head: b.head, tree: b.tree };
}

/** Encodes a target record as JSON (generations as decimal strings: 64-bit, never rounded). */
export function encodeTarget(target: RewriteTarget): string {
  return JSON.stringify({
    version: 1,
    previous: encodeBaseline(target.previous),
    rewrites: target.rewrites.map((r) => ({
      next: encodeBaseline(r.next),
      changes: [...r.changes],
      ...(r.input === true ? { input: true } : {}),
    })),
  });
}

function invalid(what: string): StateError {
  return new StateError('invalid-value', `target record: ${what}`);
}

function decodeBaseline(value: unknown, name: string): TargetBaseline {
  const b = value as Record<string, unknown> | null;
  if (typeof b !== 'object' || b === null) throw invalid(`${name} is not an object`);
  const { generation, head, tree } = b;
  if (typeof generation !== 'string' || !UNSIGNED.test(generation))
    throw invalid(`${name}.generation`);
  if (typeof head !== 'string' || (head !== '' && !OID.test(head))) throw invalid(`${name}.head`);
  if (typeof tree !== 'string' || !OID.test(tree)) throw invalid(`${name}.tree`);
  return { generation: BigInt(generation), head, tree };
}

/** Decodes `target.json` strictly; anything malformed throws {@link StateError}. */
export function decodeTarget(text: string): RewriteTarget {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StateError('syntax', 'target record: not JSON');
  }
  const record = parsed as Record<string, unknown> | null;
  if (typeof record !== 'object' || record === null || record.version !== 1)
    throw invalid('version');
  if (!Array.isArray(record.rewrites)) throw invalid('rewrites');
  return {
    previous: decodeBaseline(record.previous, 'previous'),
    rewrites: (record.rewrites as unknown[]).map(decodeRewrite),
  };
}

function decodeRewrite(value: unknown): TargetRewrite {
  const rewrite = value as Record<string, unknown> | null;
  if (typeof rewrite !== 'object' || rewrite === null || !Array.isArray(rewrite.changes))
    throw invalid('rewrite');
  const changes = new Map<string, string | null>();
  for (const change of rewrite.changes as unknown[]) {
    if (!Array.isArray(change) || change.length !== 2) throw invalid('change');
    const [path, oid] = change as unknown[];
    if (typeof path !== 'string' || (oid !== null && (typeof oid !== 'string' || !OID.test(oid))))
      throw invalid('change');
    changes.set(path, oid as string | null);
  }
  if (rewrite.input !== undefined && rewrite.input !== true) throw invalid('input');
  return {
    next: decodeBaseline(rewrite.next, 'next'),
    changes,
    ...(rewrite.input === true ? { input: true } : {}),
  };
}
