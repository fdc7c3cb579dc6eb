import { createRequire } from 'node:module';
import type { MemberNode, ValueNode } from '@humanwhocodes/momoa';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

// momoa (a 90 KB parser) is loaded on the first `tools/call`, not with the transport: the
// transport answers `initialize` before anything else loads, and that answer never needs it.
// `require` (momoa ships CommonJS too), because the transport checks each line synchronously.
const requireCjs = createRequire(import.meta.url);
let momoa: typeof import('@humanwhocodes/momoa') | undefined;

function parseJsonAst(line: string) {
  momoa ??= requireCjs('@humanwhocodes/momoa') as typeof import('@humanwhocodes/momoa');
  return momoa.parse(line);
}

/**
 * Remembers which `tools/call` requests carried a duplicate key inside `params.arguments`.
 * `JSON.parse` (and so the SDK) silently keeps the last of two equal keys, so the transport
 * scans each line with a JSON AST parser that keeps every member and marks the request id
 * here; the call handler consumes the mark and answers INVALID_ARGUMENTS (contract §2).
 */
export class DuplicateKeyLedger {
  /** Marked ids, oldest first. */
  readonly #marked = new Set<string>();

  /**
   * Records that request `id` carried a duplicate key. A request the SDK rejects before its
   * handler runs never consumes its mark, so the ledger keeps the newest
   * {@link DUPLICATE_MARKS_KEPT} marks only: far more than requests can be in flight at once.
   */
  mark(id: RequestId): void {
    const key = keyOf(id);
    this.#marked.delete(key);
    this.#marked.add(key);
    for (const oldest of this.#marked) {
      if (this.#marked.size <= DUPLICATE_MARKS_KEPT) break;
      this.#marked.delete(oldest);
    }
  }

  /** How many marks are held (tests check the bound). */
  get size(): number {
    return this.#marked.size;
  }

  /** True (once) when request `id` was marked; ids may be reused after a request ends. */
  consume(id: RequestId): boolean {
    return this.#marked.delete(keyOf(id));
  }
}

/** The bound of {@link DuplicateKeyLedger}: requests a client may keep in flight at once, with room to spare. */
export const DUPLICATE_MARKS_KEPT = 1024;

// `1` and `"1"` are different JSON-RPC ids.
function keyOf(id: RequestId): string {
  return `${typeof id}:${id}`;
}

function member(node: ValueNode, name: string): MemberNode[] {
  return node.type === 'Object'
    ? node.members.filter((m) => m.name.type === 'String' && m.name.value === name)
    : [];
}

function hasDuplicateKeys(node: ValueNode): boolean {
  if (node.type === 'Array') return node.elements.some((e) => hasDuplicateKeys(e.value));
  if (node.type !== 'Object') return false;
  const names = new Set<string>();
  for (const m of node.members) {
    const name = m.name.type === 'String' ? m.name.value : m.name.name;
    if (names.has(name)) return true;
    names.add(name);
    if (hasDuplicateKeys(m.value)) return true;
  }
  return false;
}

/**
 * True when the JSON text is a `tools/call` request whose `params` repeat `arguments` or
 * whose `arguments` (at any depth) repeat a key. Text that is not such a request is false:
 * the SDK's own parse decides what happens to it.
 */
export function toolCallHasDuplicateKeys(line: string): boolean {
  const root = parseAst(line);
  return root !== undefined && callNodeHasDuplicateKeys(root);
}

/**
 * For a JSON-RPC batch (a JSON array): the positions of its `tools/call` elements whose
 * arguments repeat a key, as {@link toolCallHasDuplicateKeys} decides for one message.
 */
export function batchCallsWithDuplicateKeys(line: string): Set<number> {
  const root = parseAst(line);
  const found = new Set<number>();
  if (root?.type === 'Array')
    root.elements.forEach((element, index) => {
      if (callNodeHasDuplicateKeys(element.value)) found.add(index);
    });
  return found;
}

function parseAst(line: string): ValueNode | undefined {
  try {
    return parseJsonAst(line).body;
  } catch {
    return undefined;
  }
}

function callNodeHasDuplicateKeys(root: ValueNode): boolean {
  const method = member(root, 'method').at(-1)?.value;
  if (method?.type !== 'String' || method.value !== 'tools/call') return false;
  const params = member(root, 'params').at(-1)?.value;
  if (!params) return false;
  const args = member(params, 'arguments');
  return args.length > 1 || args.some((m) => hasDuplicateKeys(m.value));
}
