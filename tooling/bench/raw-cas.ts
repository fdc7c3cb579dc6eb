// The physical limit: the store's own compare-and-swap on a manifest-sized object, with no
// engine, merge or protocol in front of it. Every commit ends in one such CAS on `current`, so
// accepted commits/s can never exceed this rate on the same store.
import { isStoreError, type ObjectStore } from '@slivingdoc/store';
import type { RawCasResult, StoreKind } from './report';
import { ratePerSecond, summarize } from './stats';

/** A body the size of a small manifest (a checkpoint plus a few increments: about 1 KiB). */
function manifestSized(writer: number, sequence: number): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify({ writer, sequence })}${' '.repeat(1000)}`);
}

/**
 * `writers` loops, each reading `current` and replacing it if unchanged, for `durationMs`
 * (at least once each, so some replacement always succeeds). A lost race (precondition failed, or an ambiguous answer whose read-back shows another
 * body) is counted and retried at once.
 */
export async function measureRawCas(opts: {
  store: ObjectStore;
  kind: StoreKind;
  writers: number;
  durationMs: number;
}): Promise<RawCasResult> {
  const key = 'current';
  const roundTrips: number[] = [];
  let lost = 0;
  const start = performance.now();
  const deadline = start + opts.durationMs;
  await Promise.all(
    Array.from({ length: opts.writers }, async (_, writer) => {
      let sequence = 0;
      // At least one attempt each, however late a writer starts on a loaded machine.
      do {
        const begin = performance.now();
        const seen = await opts.store.get(key);
        const body = manifestSized(writer, ++sequence);
        try {
          if (seen) await opts.store.replaceIfMatch(key, body, seen.etag);
          else await opts.store.createIfAbsent(key, body);
          roundTrips.push(performance.now() - begin);
        } catch (error) {
          if (isStoreError(error, 'precondition-failed')) lost++;
          // Ceph RGW answers many losers of an If-Match race with a 500 (docs/performance.md):
          // an ambiguous answer, resolved as the engine does, by reading back what won.
          else if (isStoreError(error, 'ambiguous')) {
            const now = await opts.store.get(key);
            if (now && Buffer.from(now.body).equals(Buffer.from(body)))
              roundTrips.push(performance.now() - begin);
            else lost++;
          } else throw error;
        }
      } while (performance.now() < deadline);
    }),
  );
  const elapsed = performance.now() - start;
  const roundTrip = summarize(roundTrips);
  if (!roundTrip) throw new Error(`no compare-and-swap succeeded on the ${opts.kind} store`);
  return {
    store: opts.kind,
    writers: opts.writers,
    casPerSecond: ratePerSecond(roundTrips.length, elapsed),
    roundTrip,
    lost,
  };
}
