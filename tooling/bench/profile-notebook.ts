// Profiles the engine (in-process, embedded store) on one notebook of N files, one CPU profile
// per phase, so the cost of a one-file commit, a warm pull and a no-op pull can be read apart:
//   tsx tooling/bench/profile-notebook.ts <files> <out-dir>
//   tsx tooling/bench/profile-summary.ts <out-dir>/warm-pull.cpuprofile
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seededPath, seedNotebook } from './scenarios/notebook';
import { median } from './stats';
import { embeddedTarget } from './stores';
import { createEnginePool } from './writers/engine';
import type { Outcome } from './writers/types';

async function main(files: number, outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-profile-'));
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  try {
    const store = await embeddedTarget(join(root, 'store')).open('profile');
    const seedMs = await seedNotebook(store, root, files);
    const pool = await createEnginePool({
      store,
      root: join(root, 'w'),
      count: 2,
      retries: 8,
      pullFirst: true,
    });
    const [reader, committer] = pool.writers as [
      (typeof pool.writers)[0],
      (typeof pool.writers)[0],
    ];
    const phases: Record<string, number[]> = { commit: [], 'warm-pull': [], 'noop-pull': [] };
    const phase = async (name: string, run: () => Promise<Outcome>) => {
      await session.post('Profiler.start');
      const outcome = await run();
      const { profile } = await session.post('Profiler.stop');
      if (outcome.code !== 'OK') throw new Error(`${name}: ${outcome.code}·${outcome.reason}`);
      phases[name]!.push(outcome.ms);
      await writeFile(
        join(outDir, `${name}-${phases[name]!.length}.cpuprofile`),
        JSON.stringify(profile),
      );
    };
    for (let rep = 1; rep <= 3; rep++) {
      await writeFile(join(committer.dir, seededPath(1)), `changed ${rep}\n`);
      await phase('commit', () => committer.commit(`change ${rep}`));
      await phase('warm-pull', () => reader.pull());
      await phase('noop-pull', () => reader.pull());
    }
    await pool.close();
    const line = Object.entries(phases)
      .map(
        ([name, ms]) =>
          `${name} median ${median(ms).toFixed(0)} ms (${ms.map((v) => v.toFixed(0)).join(', ')})`,
      )
      .join('; ');
    process.stdout.write(`${files} files, seeded in ${seedMs.toFixed(0)} ms; ${line}\n`);
  } finally {
    session.disconnect();
    await rm(root, { recursive: true, force: true });
  }
}

main(Number(process.argv[2] ?? 10000), resolve(process.argv[3] ?? 'profiles')).catch(
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exitCode = 1;
  },
);
