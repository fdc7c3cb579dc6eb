// Review's figures (docs/review.md), run by `pnpm bench` after the view's block:
// - notes_commit's engine call p50, side by side in one process on one embedded store: a
//   person's commit (today's path, no review read), an agent's tool commit while review is
//   direct (one read of the setting), and an agent's tool commit in queue mode (a proposal);
// - approving a 100-file proposal against one commit of those 100 files, and the reviewer's
//   next pull (an approval publishes without writing the reviewer's copy, which catches up
//   there, as after anyone else's publication).
// Prints a table and writes bench-results/review.json.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  createEmbeddedStore,
  createNotebookService,
  type NotebookService,
  type ObjectStore,
  setReview,
} from '@slivingdoc/engine';

const repoRoot = resolve(import.meta.dirname, '../..');
const QUICK =
  process.argv.includes('--quick') ||
  (!!process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0');
const COMMITS = QUICK ? 10 : 60;
const APPROVALS = QUICK ? 3 : 10;
const FILES = 100;

function progress(text: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function open(store: ObjectStore, root: string, name: string): Promise<NotebookService> {
  const workspaceRoot = join(root, name);
  await mkdir(workspaceRoot, { recursive: true });
  const service = await createNotebookService({
    store,
    privateRoot: join(root, `${name}-private`),
    workspaceRoot,
    notebookDir: workspaceRoot,
  });
  await service.pull({});
  return service;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-bench-review-'));
  const store = await createEmbeddedStore({ dir: join(root, 'store'), prefix: 'review' });
  const person = await open(store, root, 'person');
  const agent = await open(store, root, 'agent');
  const samples = { person: [] as number[], toolDirect: [] as number[], toolQueue: [] as number[] };

  progress(`review: ${COMMITS} commits of each kind, interleaved`);
  for (let n = 0; n < COMMITS; n += 1) {
    await writeFile(join(person.notebookDir, 'person.md'), `person ${n}\n`);
    samples.person.push(await timed(() => person.commit({ message: `p${n}`, actor: 'ann' })));
    await writeFile(join(agent.notebookDir, 'agent.md'), `direct ${n}\n`);
    samples.toolDirect.push(
      await timed(() => agent.commit({ message: `d${n}`, actor: 'bot', viaTools: true })),
    );
  }
  await setReview(store, { mode: 'queue', paths: ['queued'] });
  for (let n = 0; n < COMMITS; n += 1) {
    await writeFile(join(agent.notebookDir, 'queued.md'), `queued ${n}\n`);
    samples.toolQueue.push(
      await timed(() => agent.commit({ message: `q${n}`, actor: 'bot', viaTools: true })),
    );
  }

  progress(
    `review: ${APPROVALS} approvals of a ${FILES}-file proposal and ${APPROVALS} commits of ${FILES} files`,
  );
  await setReview(store, { mode: 'queue' });
  const approve: number[] = [];
  const catchUp: number[] = [];
  const commit: number[] = [];
  for (let n = 0; n < APPROVALS; n += 1) {
    await agent.pull({});
    for (let f = 0; f < FILES; f += 1) {
      await writeFile(join(agent.notebookDir, `a-${f}.md`), `approval ${n} file ${f}\n`);
    }
    const { proposalId } = await agent.commit({ message: `a${n}`, actor: 'bot', viaTools: true });
    await person.pull({});
    approve.push(await timed(() => person.approve({ id: proposalId!, actor: 'ann' })));
    // The commit below starts, like the approval, from a copy at the accepted head.
    catchUp.push(await timed(() => person.pull({})));
    for (let f = 0; f < FILES; f += 1) {
      await writeFile(join(person.notebookDir, `c-${f}.md`), `commit ${n} file ${f}\n`);
    }
    commit.push(await timed(() => person.commit({ message: `c${n}`, actor: 'ann' })));
  }
  await person.close();
  await agent.close();

  const figures = {
    commits: COMMITS,
    personCommitP50Ms: median(samples.person),
    toolCommitDirectP50Ms: median(samples.toolDirect),
    toolCommitQueueP50Ms: median(samples.toolQueue),
    approvals: APPROVALS,
    approve100FilesP50Ms: median(approve),
    pullAfterApproveP50Ms: median(catchUp),
    commit100FilesP50Ms: median(commit),
  };
  const rows = [
    ['person commit (no review read)', figures.personCommitP50Ms],
    ['agent tool commit, review direct', figures.toolCommitDirectP50Ms],
    ['agent tool commit, queue (proposal)', figures.toolCommitQueueP50Ms],
    [`approve a ${FILES}-file proposal`, figures.approve100FilesP50Ms],
    ["the reviewer's next pull", figures.pullAfterApproveP50Ms],
    [`commit ${FILES} files`, figures.commit100FilesP50Ms],
  ] as const;
  process.stdout.write(`\nreview (embedded store), p50\n`);
  for (const [what, ms] of rows) process.stdout.write(`  ${what.padEnd(40)} ${ms.toFixed(1)} ms\n`);
  const out = resolve(repoRoot, process.env.BENCH_OUT ?? 'bench-results');
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'review.json'), `${JSON.stringify(figures, null, 2)}\n`);
}

await main();
