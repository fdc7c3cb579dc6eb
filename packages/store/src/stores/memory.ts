import { StoreError, type StoreErrorKind } from '../errors';
import {
  assertKey,
  assertListNamespace,
  assertPrefix,
  fullKey,
  isConditionalKey,
  isDeletableKey,
  isPackKey,
} from '../keys';
import { batches, type ListedObject, type ObjectStore } from '../object-store';
import { putProven } from './settle-upload';

/** The operations of {@link ObjectStore}, as the call log and fault rules name them. */
export type StoreOperation =
  | 'get'
  | 'createIfAbsent'
  | 'replaceIfMatch'
  | 'putImmutable'
  | 'getStream'
  | 'list'
  | 'deleteMany';

/** What an injected fault does to the matching call. */
export type FaultAction =
  /**
   * Throw a StoreError of this kind without any effect; `transient` marks an `other` failure
   * as one worth asking again (a 5xx or throttling answer to a read).
   */
  | { type: 'fail'; kind: StoreErrorKind; transient?: boolean }
  /** Wait before running the call (until the promise settles, or for `ms`). */
  | { type: 'delay'; ms?: number; until?: Promise<unknown> }
  /** Answer `precondition-failed` without any effect. */
  | { type: 'precondition-failed' }
  /** Apply the call's effect, then throw `ambiguous` as if the response was lost. */
  | { type: 'lose-response' }
  /** Remove the stored object `key` (relative) just before the call runs. */
  | { type: 'drop'; key: string };

/** One fault rule: applies `action` to the next `times` calls matching `op` (and `key`). */
export interface Fault {
  op: StoreOperation;
  /** Only calls on this relative key; any key when omitted. */
  key?: string;
  /** How many matching calls it applies to (default 1). */
  times?: number;
  action: FaultAction;
}

/** One entry of the call log. */
export interface LoggedCall {
  op: StoreOperation;
  /** The relative key(s) of the call; empty for `list`. */
  keys: string[];
}

/** The in-memory fake: an {@link ObjectStore} plus deterministic fault injection and a call log. */
export interface MemoryStore extends ObjectStore {
  /** Every call made, in order, including those a fault failed. */
  readonly calls: readonly LoggedCall[];
  /** Empties the call log. */
  clearCalls(): void;
  /** Queues a fault rule; rules match in the order they were injected. */
  inject(fault: Fault): void;
  /** The metadata `putImmutable` stored for `key`, if any. */
  metadataOf(key: string): Record<string, string> | undefined;
  /** Removes an object behind the contract's back (a vanished pack). */
  drop(key: string): void;
}

interface StoredObject {
  body: Uint8Array;
  etag: string;
  metadata: Record<string, string>;
}

/**
 * An {@link ObjectStore} in memory, for tests. `ignorePreconditions` makes conditional writes
 * always succeed — a deliberately broken store the compatibility probe must refuse.
 */
export function createMemoryStore(
  opts: { prefix?: string; ignorePreconditions?: boolean } = {},
): MemoryStore {
  const prefix = opts.prefix ?? 'slivingdoc';
  assertPrefix(prefix);
  const objects = new Map<string, StoredObject>();
  const calls: LoggedCall[] = [];
  const faults: (Fault & { remaining: number })[] = [];
  let version = 0;

  const at = (key: string): string => fullKey(prefix, key);
  const store = (key: string, body: Uint8Array, metadata: Record<string, string> = {}): string => {
    version += 1;
    const etag = `"m${version}"`;
    objects.set(at(key), { body: Uint8Array.from(body), etag, metadata: { ...metadata } });
    return etag;
  };

  /** Logs the call, applies matching faults, runs `effect`. */
  async function call<T>(op: StoreOperation, keys: string[], effect: () => T): Promise<T> {
    calls.push({ op, keys: [...keys] });
    let loseResponse = false;
    for (const fault of faults) {
      if (fault.remaining === 0 || fault.op !== op) continue;
      if (fault.key !== undefined && !keys.includes(fault.key)) continue;
      fault.remaining -= 1;
      const action = fault.action;
      switch (action.type) {
        case 'fail':
          throw new StoreError(action.kind, `${op} failed (injected)`, {
            code: 'INJECTED',
            transient: action.transient === true,
          });
        case 'precondition-failed':
          throw new StoreError('precondition-failed', `${op} precondition failed (injected)`, {
            code: 'INJECTED',
          });
        case 'delay':
          if (action.until) await action.until.catch(() => undefined);
          if (action.ms) await new Promise((resolve) => setTimeout(resolve, action.ms));
          break;
        case 'drop':
          objects.delete(at(action.key));
          break;
        case 'lose-response':
          loseResponse = true;
          break;
      }
    }
    // Real stores answer asynchronously; a microtask boundary keeps races honest.
    await Promise.resolve();
    const result = effect();
    if (loseResponse) {
      throw new StoreError('ambiguous', `${op} response lost (injected)`, { code: 'INJECTED' });
    }
    return result;
  }

  const preconditionFailed = (op: string): never => {
    throw new StoreError('precondition-failed', `${op} precondition failed`, { code: '412' });
  };

  const readStream = (key: string): AsyncIterable<Uint8Array> | undefined => {
    const found = objects.get(at(key));
    if (!found) return undefined;
    const body = Uint8Array.from(found.body);
    return (async function* () {
      yield body;
    })();
  };

  return {
    identity: `memory ${prefix}`,
    get calls() {
      return calls;
    },
    clearCalls() {
      calls.length = 0;
    },
    inject(fault) {
      faults.push({ ...fault, remaining: fault.times ?? 1 });
    },
    metadataOf(key) {
      const found = objects.get(at(key));
      return found ? { ...found.metadata } : undefined;
    },
    drop(key) {
      objects.delete(at(key));
    },
    get(key) {
      assertKey(key, (k) => isConditionalKey(k) || isPackKey(k), 'get');
      return call('get', [key], () => {
        const found = objects.get(at(key));
        return found ? { body: Uint8Array.from(found.body), etag: found.etag } : undefined;
      });
    },
    createIfAbsent(key, body) {
      assertKey(key, isConditionalKey, 'createIfAbsent');
      return call('createIfAbsent', [key], () => {
        if (objects.has(at(key)) && !opts.ignorePreconditions) preconditionFailed('createIfAbsent');
        return { etag: store(key, body) };
      });
    },
    replaceIfMatch(key, body, etag) {
      assertKey(key, isConditionalKey, 'replaceIfMatch');
      return call('replaceIfMatch', [key], () => {
        if (objects.get(at(key))?.etag !== etag && !opts.ignorePreconditions) {
          preconditionFailed('replaceIfMatch');
        }
        return { etag: store(key, body) };
      });
    },
    putImmutable(key, body, metadata) {
      assertKey(key, isPackKey, 'putImmutable');
      return putProven(
        () => call('putImmutable', [key], () => void store(key, body, metadata)),
        async () => readStream(key),
        body,
      );
    },
    getStream(key) {
      assertKey(key, isPackKey, 'getStream');
      return call('getStream', [key], () => readStream(key));
    },
    list(namespace) {
      assertListNamespace(namespace);
      return call('list', [], () => {
        const start = at(namespace);
        const listed: ListedObject[] = [];
        for (const [key, value] of objects) {
          if (key.startsWith(start)) {
            listed.push({
              key: key.slice(start.length - namespace.length),
              size: value.body.byteLength,
            });
          }
        }
        return listed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      });
    },
    async deleteMany(keys) {
      for (const key of keys) assertKey(key, isDeletableKey, 'deleteMany');
      for (const batch of batches(keys)) {
        await call('deleteMany', batch, () => {
          for (const key of batch) objects.delete(at(key));
        });
      }
    },
  };
}
