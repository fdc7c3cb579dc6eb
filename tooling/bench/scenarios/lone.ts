// No added latency for a lone writer: one writer commits alone with group commit
// on (the app's default) and another, on its own notebook of the same store, with it off (the
// test-only SLIVINGDOC_TEST_GROUP_COMMIT=0), one commit each in turn, the order swapped every
// round so machine load hits both alike.
import type { LoneResult, StoreKind } from '../report';
import { summarize } from '../stats';
import type { Writer } from '../writers/types';
import { mustBeOk, writeNote } from './load';

/** Commits `commits` times in each writer (both already pulled) and summarises the latencies. */
export async function runLone(opts: {
  store: StoreKind;
  grouped: Writer;
  ungrouped: Writer;
  commits: number;
}): Promise<LoneResult> {
  const latencies = { grouped: [] as number[], ungrouped: [] as number[] };
  for (let round = 0; round < opts.commits; round++) {
    const order =
      round % 2 === 0 ? (['grouped', 'ungrouped'] as const) : (['ungrouped', 'grouped'] as const);
    for (const which of order) {
      const writer = opts[which];
      await writeNote(writer, 0, round + 1);
      const outcome = mustBeOk(
        await writer.commit(`lone ${which} ${round}`),
        `lone ${which} commit`,
      );
      latencies[which].push(outcome.ms);
    }
  }
  const grouped = summarize(latencies.grouped);
  const ungrouped = summarize(latencies.ungrouped);
  if (grouped === undefined || ungrouped === undefined) throw new Error('lone writer: no commits');
  return { scenario: 'lone', store: opts.store, commits: opts.commits, grouped, ungrouped };
}
