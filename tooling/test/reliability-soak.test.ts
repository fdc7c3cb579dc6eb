import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {} from '@slivingdoc/testkit/rgw-global-setup';
import { providedS3 } from '@slivingdoc/testkit/s3-env';
import { describe, expect, inject, it } from 'vitest';
import { checkSoak, formatSoakTotals, type SoakReport } from '../reliability/soak/checker';
import { runSoak } from '../reliability/soak/driver';
import type { WriterLedger } from '../reliability/soak/ledger';
import { keepBothSides } from '../reliability/soak/resolve';
import { soakProblems } from '../reliability/soak/verdict';

// The shortened soak: several writer processes commit random insertions into
// shared files at once; every acknowledged line must be in the final notebook. `pnpm soak`
// runs the full 20 × 200 on both stores.

const WRITERS = 3;
const COMMITS = 5;

function expectHeld(report: SoakReport & { manifestGeneration: number }, label: string) {
  console.log(formatSoakTotals(label, report));
  expect(soakProblems(report, WRITERS * COMMITS)).toEqual([]);
  expect(report.lost).toBe(0);
  // Group commit publishes several commits with one CAS: at least one publication happened.
  expect(report.manifestGeneration).toBeGreaterThanOrEqual(1);
}

describe('soak (shortened)', () => {
  it(`embedded store: ${WRITERS} writer processes × ${COMMITS} commits lose no acknowledged line`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slivingdoc-soak-store-'));
    expectHeld(
      await runSoak({
        writers: WRITERS,
        commits: COMMITS,
        store: { kind: 'embedded', dir, prefix: 'soak' },
      }),
      'embedded',
    );
  }, 240_000);

  it(`real S3 server: ${WRITERS} writer processes × ${COMMITS} commits lose no acknowledged line`, async () => {
    expectHeld(
      await runSoak({
        writers: WRITERS,
        commits: COMMITS,
        store: { kind: 's3', prefix: 'soak', ...providedS3(inject('s3')) },
      }),
      's3',
    );
  }, 240_000);
});

describe('soak checker', () => {
  const ledger = (
    acknowledged: WriterLedger['acknowledged'],
    removed: string[] = [],
  ): WriterLedger => ({
    writer: 0,
    acknowledged,
    resolutions: removed.length > 0 ? [{ file: 'a.md', removed }] : [],
    totals: { commits: 1, conflicts: 0, retries: 0, remoteBusy: 0, transient: 0 },
    publishedGenerations: [1],
    anomalies: [],
  });

  it('counts an acknowledged line missing from the final notebook as lost', () => {
    const report = checkSoak(
      [
        ledger([
          { file: 'a.md', line: 'kept', generation: 1 },
          { file: 'a.md', line: 'gone', generation: 1 },
        ]),
      ],
      new Map([['a.md', 'kept\n']]),
    );
    expect(report.lost).toBe(1);
    expect(report.lostLines).toEqual([{ file: 'a.md', line: 'gone', generation: 1 }]);
  });

  it('excuses a line the resolver recorded as deliberately removed', () => {
    const report = checkSoak(
      [ledger([{ file: 'a.md', line: 'edited', generation: 1 }], ['edited'])],
      new Map([['a.md', '']]),
    );
    expect(report.lost).toBe(0);
  });

  it('flags two publishing commits told the same generation, and surviving markers', () => {
    const report = checkSoak(
      [ledger([]), { ...ledger([]), writer: 1 }],
      new Map([['a.md', 'x\n=======\n']]),
    );
    expect(report.duplicateGenerations).toEqual([1]);
    expect(report.filesWithMarkers).toEqual(['a.md']);
  });

  it('flags a generation reported beyond the final manifest (members of a group may share one)', () => {
    const acked = [{ file: 'a.md', line: 'x', generation: 1 }];
    const report = checkSoak(
      [ledger(acked), { ...ledger(acked), writer: 1 }],
      new Map([['a.md', 'x\n']]),
    );
    expect(report.maxPublishedGeneration).toBe(1);
    expect(soakProblems({ ...report, manifestGeneration: 1 }, report.commits)).toEqual([]);
    expect(soakProblems({ ...report, manifestGeneration: 0 }, report.commits)).toEqual([
      "generation 1 reported beyond the final manifest's 0",
    ]);
  });

  it('resolves a marker block by keeping both sides and removing only the three markers', () => {
    const text = 'top\n<<<<<<< local\nmine\r\n=======\ntheirs\n>>>>>>> remote\nend';
    const resolved = keepBothSides(text, [{ start: 2, end: 6 }]);
    expect(resolved.text).toBe('top\nmine\r\ntheirs\nend');
    expect(resolved.removed).toEqual(['<<<<<<< local', '=======', '>>>>>>> remote']);
  });
});
