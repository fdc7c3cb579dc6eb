import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeText } from '../src/index';
import { tempDir } from './gitOracle';
import { prng } from './prng';

interface Case {
  kind: string;
  base: string;
  local: string;
  remote: string;
}

/** One generated three-way case: random line edits, same-place insertions, deletions, identical edits, CRLF, no final newline. */
function generateCase(random: () => number, index: number): Case {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const words = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'ü', '日本'];
  const eolMode = pick(['lf', 'lf', 'crlf', 'mixed'] as const);
  const eol = () => (eolMode === 'lf' ? '\n' : eolMode === 'crlf' ? '\r\n' : pick(['\n', '\r\n']));
  const size = Math.floor(random() * 14);
  const base = Array.from(
    { length: size },
    () => `${pick(words)}${Math.floor(random() * 4)}${eol()}`,
  );
  const kinds = [
    'edit',
    'insert',
    'delete',
    'identical',
    'same-place-insert',
    'no-final-newline',
  ] as const;
  const kind = kinds[index % kinds.length] as (typeof kinds)[number];
  const fresh = () => `${pick(words)}-new${Math.floor(random() * 3)}${eol()}`;
  const mutate = (lines: string[]): string[] => {
    const out = [...lines];
    const edits = 1 + Math.floor(random() * 3);
    for (let n = 0; n < edits; n++) {
      const at = Math.floor(random() * (out.length + 1));
      const op = pick(['edit', 'insert', 'delete'] as const);
      if (op === 'insert' || out.length === 0) out.splice(at, 0, fresh());
      else if (op === 'delete') out.splice(Math.min(at, out.length - 1), 1);
      else out[Math.min(at, out.length - 1)] = fresh();
    }
    return out;
  };
  let local: string[];
  let remote: string[];
  if (kind === 'identical') {
    local = mutate(base);
    remote = random() < 0.5 ? [...local] : mutate(local);
  } else if (kind === 'same-place-insert') {
    const at = Math.floor(random() * (base.length + 1));
    local = [...base];
    remote = [...base];
    local.splice(at, 0, fresh());
    remote.splice(at, 0, random() < 0.3 ? (local[at] as string) : fresh());
  } else if (kind === 'delete') {
    const at = Math.floor(random() * Math.max(base.length, 1));
    local = base.filter((_, i) => i !== at);
    remote = mutate(base);
  } else {
    local = mutate(base);
    remote = mutate(base);
  }
  const strip = (lines: string[]) => {
    const joined = lines.join('');
    return kind === 'no-final-newline' && random() < 0.8 ? joined.replace(/\r?\n$/, '') : joined;
  };
  return { kind, base: strip(base), local: strip(local), remote: strip(remote) };
}

const scratch = tempDir('merge-differential-');
afterAll(() => scratch.remove(), 60_000);

/**
 * Runs `git merge-file` on every case with one shell script (four parallel loops): one spawn
 * from Node instead of a thousand keeps the run short on a loaded two-core machine.
 */
function gitMergeFileAll(cases: Case[]): { clean: boolean; content: string }[] {
  const lanes = 4;
  cases.forEach((c, index) => {
    writeFileSync(`${scratch.dir}/${index}.local`, c.local);
    writeFileSync(`${scratch.dir}/${index}.base`, c.base);
    writeFileSync(`${scratch.dir}/${index}.remote`, c.remote);
  });
  const loop = (lane: number) =>
    `(for d in $(seq ${lane} ${lanes} ${cases.length - 1}); do git merge-file -p -L local -L base -L remote $d.local $d.base $d.remote > $d.out; echo $? > $d.rc; done) &`;
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

describe('mergeText against git merge-file (differential)', () => {
  it('agrees with git on the clean-or-conflict verdict and on every clean result', () => {
    const random = prng(20261130);
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
      const ours = mergeText(Buffer.from(c.base), Buffer.from(c.local), Buffer.from(c.remote));
      const ourContent = Buffer.from(ours.content).toString('utf8');
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
