/**
 * The merge and the envelope are both bottom layers (neither may import the other), so the
 * merge keeps its own copy of three pieces of the envelope's vocabulary. The engine, which
 * carries the merge's results into envelopes, sees both: these checks fail (at type-check
 * and at run time) when the copies drift.
 */
import * as envelope from '@slivingdoc/envelope';
import type * as merge from '@slivingdoc/merge';
import { diffstat } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';

type MergeFileStat = Awaited<ReturnType<typeof diffstat>>[number];

describe('vocabulary shared by the merge and the envelope', () => {
  it('FileStat and LineRange are the same types', () => {
    expectTypeOf<MergeFileStat>().toEqualTypeOf<envelope.FileStat>();
    expectTypeOf<merge.FileStat>().toEqualTypeOf<envelope.FileStat>();
    expectTypeOf<merge.LineRange>().toEqualTypeOf<envelope.LineRange>();
  });

  it("the merge's diffstat comes in compareUtf8's order", async () => {
    // U+E000 sorts before U+1F600 by UTF-8 bytes but after it by UTF-16 code units.
    const paths = ['b.md', '\u{1F600}.md', '\uE000.md', 'a/b.md', 'a.md'];
    const db = openMemoryObjectDb();
    const blob = await db.writeBlob(new TextEncoder().encode('x\n'));
    const stats = await diffstat(new Map(), new Map(paths.map((path) => [path, blob])), db);
    const byBytes = [...paths].sort(envelope.compareUtf8);
    expect(byBytes).not.toEqual([...paths].sort());
    expect(stats.map((stat) => stat.path)).toEqual(byBytes);
  });
});
