import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { seededRandom } from '@slivingdoc/testkit/seeded-random';
import diff3Merge from 'diff3';
import { afterAll, describe, expect, it } from 'vitest';
import { type MergeAdditions, mergeText } from '../src/index';
import { splitLines, toByteString } from '../src/operations/lines';
import { tempDir } from './git-oracle';
import { type Case, generateCase, generateInsertionCase, type InsertionCase } from './merge-cases';

const scratch = tempDir('merge-differential-');
afterAll(() => scratch.remove(), 60_000);

/**
 * Runs `git merge-file` on every case with one shell script (four parallel loops): one spawn
 * from Node instead of a thousand keeps the run short on a loaded two-core machine.
 */
function gitMergeFileAll(
  cases: Case[],
  mode: 'merge' | 'union' = 'merge',
): { clean: boolean; content: string }[] {
  const lanes = 4;
  cases.forEach((c, index) => {
    writeFileSync(`${scratch.dir}/${index}.local`, c.local);
    writeFileSync(`${scratch.dir}/${index}.base`, c.base);
    writeFileSync(`${scratch.dir}/${index}.remote`, c.remote);
  });
  // --union writes "ours" first; R's insertions come first in our rule, so R is "ours" there.
  const files =
    mode === 'union' ? '--union $d.remote $d.base $d.local' : '$d.local $d.base $d.remote';
  const loop = (lane: number) =>
    `(for d in $(seq ${lane} ${lanes} ${cases.length - 1}); do git merge-file -p -L local -L base -L remote ${files} > $d.out; echo $? > $d.rc; done) &`;
  const script = `${Array.from({ length: lanes }, (_, lane) => loop(lane)).join('\n')}\nwait\n`;
  const run = spawnSync('sh', ['-c', script], {
    cwd: scratch.dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: scratch.dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
  if (run.status !== 0) throw new Error(`git merge-file batch failed: ${run.stderr}`);
  return cases.map((_, index) => {
    const status = Number(readFileSync(`${scratch.dir}/${index}.rc`, 'utf8'));
    if (!(status >= 0 && status < 128)) throw new Error(`git merge-file failed on case ${index}`);
    return { clean: status === 0, content: readFileSync(`${scratch.dir}/${index}.out`, 'utf8') };
  });
}

/** SHA-256 of every result (content and ranges) the merge gave these cases before it kept concurrent insertions at one place (`keep`). */
const CONFLICT_MODE_DIGEST = '4d74589112498880eb5373fd6b550a50cd0c42c7d87cf0af5cc1b145fc37236d';

const decode = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
const mergeCase = (c: Case, additions: MergeAdditions) =>
  mergeText(Buffer.from(c.base), Buffer.from(c.local), Buffer.from(c.remote), { additions });

/** Whether diff3 finds a region where both sides only inserted (the rule of concurrent additions). */
function hasBothInserted(c: Case): boolean {
  const lines = (text: string) => splitLines(toByteString(Buffer.from(text)));
  return diff3Merge(lines(c.local), lines(c.base), lines(c.remote)).some(
    (region) => region.conflict !== undefined && region.conflict.o.length === 0,
  );
}

describe('mergeText against git merge-file (differential)', () => {
  it('`conflict` mode gives, byte for byte, the results of the merge before concurrent additions', () => {
    const random = seededRandom(20261130);
    const digest = createHash('sha256');
    for (let index = 0; index < 1000; index++) {
      const result = mergeCase(generateCase(random, index), 'conflict');
      digest.update(result.content);
      digest.update(JSON.stringify(result.conflicts));
    }
    expect(digest.digest('hex')).toBe(CONFLICT_MODE_DIGEST);
  }, 120_000);

  it('`keep` differs from `conflict` only in files where both sides inserted at one place', () => {
    const random = seededRandom(20261130);
    let outside = 0;
    for (let index = 0; index < 1000; index++) {
      const c = generateCase(random, index);
      if (hasBothInserted(c)) continue;
      outside++;
      expect(mergeCase(c, 'keep')).toEqual(mergeCase(c, 'conflict'));
    }
    // The generator's same-place insertions make a sixth of the cases fall under the rule.
    expect(outside).toBeGreaterThan(700);
    expect(outside).toBeLessThan(1000);
  }, 120_000);

  it('agrees with git on the clean-or-conflict verdict and on every clean result (`conflict` mode)', () => {
    const random = seededRandom(20261130);
    const total = 1000;
    const cases = Array.from({ length: total }, (_, index) => generateCase(random, index));
    const verdicts = gitMergeFileAll(cases);
    let verdictAgree = 0;
    let cleanBoth = 0;
    let cleanAgree = 0;
    let conflictBoth = 0;
    let conflictTextAgree = 0;
    const disagreements: { kind: string; ours: boolean; git: boolean }[] = [];
    for (let index = 0; index < total; index++) {
      const c = cases[index] as Case;
      const ours = mergeCase(c, 'conflict');
      const ourContent = decode(ours.content);
      const oursClean = !ours.conflicted;
      const theirs = verdicts[index] as { clean: boolean; content: string };
      if (oursClean === theirs.clean) verdictAgree++;
      else {
        disagreements.push({ kind: c.kind, ours: oursClean, git: theirs.clean });
        if (process.env.MERGE_DIFF_VERBOSE)
          console.log(JSON.stringify({ ...c, ours: ourContent, git: theirs.content }));
      }
      if (oursClean && theirs.clean) {
        cleanBoth++;
        if (ourContent === theirs.content) cleanAgree++;
      }
      if (!oursClean && !theirs.clean) {
        conflictBoth++;
        if (ourContent === theirs.content) conflictTextAgree++;
      }
    }
    const rate = (n: number, d: number) =>
      `${n}/${d} (${((100 * n) / Math.max(d, 1)).toFixed(1)}%)`;
    console.log(
      [
        `git merge-file differential over ${total} cases:`,
        `  verdict agreement            ${rate(verdictAgree, total)}`,
        `  clean result identical       ${rate(cleanAgree, cleanBoth)}`,
        `  conflict text identical      ${rate(conflictTextAgree, conflictBoth)} (informational: git trims common lines off conflicts)`,
        `  verdict disagreements by kind ${JSON.stringify(countBy(disagreements.map((d) => `${d.kind}:${d.ours ? 'ours-clean' : 'git-clean'}`)))}`,
      ].join('\n'),
    );
    expect(cleanAgree).toBe(cleanBoth);
    expect(verdictAgree / total).toBeGreaterThanOrEqual(0.99);
  }, 180_000);
});

function countBy(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[item] = (out[item] ?? 0) + 1;
  return out;
}

/** Lines equal up to their LF or CRLF terminator. */
const sameText = (x: string, y: string) => x.replace(/\r?\n$/, '') === y.replace(/\r?\n$/, '');

/**
 * Why our result for a both-inserted case may differ from `git merge-file --union` with R as
 * "ours" (docs/merge.md): git aligns the two insertions against each other and writes a line
 * they share after the leading run once; git compares line endings, so lines equal up to the
 * terminator are a shared leading run for us only; git gives an unterminated last line of the
 * side it writes first a line ending of its choosing even when nothing follows it. Undefined when none applies: then the results must be identical.
 */
function unionDifference(c: InsertionCase): string | undefined {
  const [l, r] = [c.localInserted, c.remoteInserted];
  let shared = 0;
  while (
    shared < l.length &&
    shared < r.length &&
    sameText(l[shared] as string, r[shared] as string)
  )
    shared++;
  const [restL, restR] = [l.slice(shared), r.slice(shared)];
  if (restL.some((x) => restR.some((y) => sameText(x, y)))) return 'a later line both inserted';
  if (l.slice(0, shared).some((x, n) => x !== r[n])) return 'a shared line differing in its ending';
  if ([...l, ...r].some((line) => !line.endsWith('\n')))
    return 'the ending given to an unterminated line';
  return undefined;
}

describe('concurrent additions against git merge-file --union', () => {
  it('every both-inserted case equals git’s union, or differs for a documented reason', () => {
    const random = seededRandom(20261201);
    const total = 500;
    const cases = Array.from({ length: total }, (_, index) => generateInsertionCase(random, index));
    const unions = gitMergeFileAll(cases, 'union');
    const tally: Record<string, number> = { identical: 0 };
    for (let index = 0; index < total; index++) {
      const c = cases[index] as InsertionCase;
      const ours = mergeCase(c, 'keep');
      expect(ours.conflicts).toEqual([]);
      const union = unions[index] as { clean: boolean; content: string };
      if (decode(ours.content) === union.content) {
        tally.identical = (tally.identical ?? 0) + 1;
        continue;
      }
      const reason = unionDifference(c);
      if (reason === undefined || process.env.MERGE_DIFF_VERBOSE)
        console.log(JSON.stringify({ ...c, ours: decode(ours.content), union: union.content }));
      expect(reason).toBeDefined();
      tally[reason as string] = (tally[reason as string] ?? 0) + 1;
    }
    console.log(`keep vs git merge-file --union over ${total} cases: ${JSON.stringify(tally)}`);
    expect(tally.identical).toBeGreaterThan(total / 2);
  }, 180_000);
});
