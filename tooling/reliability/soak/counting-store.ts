import { isStoreError, type ObjectStore } from '@slivingdoc/store';

/**
 * Wraps a store to count compare-and-swap attempts that lost the race (precondition
 * failed on `current`): the engine's internal retries, measured without touching it.
 * Every other member is forwarded bound to the real store (which may use private fields).
 */
export function countingStore(inner: ObjectStore): { store: ObjectStore; lostRaces: () => number } {
  let lost = 0;
  const replaceIfMatch: ObjectStore['replaceIfMatch'] = async (key, body, etag) => {
    try {
      return await inner.replaceIfMatch(key, body, etag);
    } catch (err) {
      if (isStoreError(err) && err.kind === 'precondition-failed') lost += 1;
      throw err;
    }
  };
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'replaceIfMatch') return replaceIfMatch;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, lostRaces: () => lost };
}
