/**
 * `pnpm bench` in @slivingdoc/merge: prints one table of the engine's hot paths on an on-disk
 * object database (a temporary bare gitdir), median of several runs. Not a test: no thresholds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCheckpointPack,
  createIncrementPack,
  diffstat,
  importPack,
  merge3,
  mergeText,
  type ObjectDb,
  openObjectDb,
  type TreeEntries,
  verifyClosure,
} from '../src/index';

const FILES = 10_000;
const RUNS = 5;
const root = mkdtempSync(join(tmpdir(), 'merge-bench-'));
let dbCounter = 0;
const freshDb = () => openObjectDb({ gitdir: join(root, `db${dbCounter++}`) });
const rows: {
  scenario: string;
  median: number;
  min: number;
  cpu: number;
  runs: number;
  note: string;
}[] = [];

async function measure(
  scenario: string,
  note: string,
  runs: number,
  body: (run: number) => Promise<unknown> | unknown,
): Promise<void> {
  const times: number[] = [];
  const cpuStart = process.cpuUsage();
  for (let run = 0; run < runs; run++) {
    const start = process.hrtime.bigint();
    await body(run);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const cpu = process.cpuUsage(cpuStart);
  times.sort((a, b) => a - b);
  rows.push({
    scenario,
    median: times[Math.floor(times.length / 2)] as number,
    min: times[0] as number,
    // CPU per run (user + system) stays meaningful when other work shares the machine.
    cpu: (cpu.user + cpu.system) / 1000 / runs,
    runs,
    note,
  });
}

/** 1 KiB of distinct text per file. */
const fileText = (i: number, version = 0) =>
  Buffer.from(
    `file ${i} version ${version}\n${'lorem ipsum dolor sit amet\n'.repeat(37)}`.slice(0, 1024),
  );
const pathOf = (i: number) => `notes/d${i % 100}/n${i}.md`;

async function notebook(db: ObjectDb): Promise<TreeEntries> {
  const contents = Array.from({ length: FILES }, (_, i) => fileText(i));
  const oids = await db.writeBlobs(contents);
  return new Map(oids.map((oid, i) => [pathOf(i), oid]));
}

async function main(): Promise<void> {
  const db = await freshDb();
  let base: TreeEntries = new Map();
  await measure('write 1,000 blobs × 1 KiB one by one', 'loose objects', 1, async () => {
    const loose = await freshDb();
    for (let i = 0; i < 1000; i++) await loose.writeBlob(fileText(i));
  });
  await measure('write 10,000 blobs × 1 KiB in bulk', 'writeBlobs: one pack', 1, async () => {
    base = await notebook(db);
  });
  const baseTree = await db.writeTree(base);
  const baseHead = await db.writeCommit({ tree: baseTree, message: Buffer.from('base'), time: 1 });
  await measure('tree build, 10,000 files, one changed', 'writeTree', RUNS, async (run) => {
    const local = new Map(base).set(pathOf(7), await db.writeBlob(fileText(7, run + 1)));
    await db.writeTree(local);
  });
  await measure('tree read, 10,000 files', 'readTree (cached)', RUNS, () => db.readTree(baseTree));
  const local = new Map(base).set(pathOf(7), await db.writeBlob(fileText(7, 100)));
  const remote = new Map(base).set(pathOf(8), await db.writeBlob(fileText(8, 100)));
  const foldKey = (p: string) => p.normalize('NFC').toUpperCase().toLowerCase();
  await measure('merge3, 10,000 files, one change per side', 'no blob read', RUNS, () =>
    merge3({ base, local, remote, db, foldKey }),
  );
  const bothLocal = new Map(base).set(
    pathOf(9),
    await db.writeBlob(Buffer.concat([Buffer.from('top\n'), fileText(9)])),
  );
  const bothRemote = new Map(base).set(
    pathOf(9),
    await db.writeBlob(Buffer.concat([fileText(9), Buffer.from('end\n')])),
  );
  await measure(
    'merge3, 10,000 files, one file changed on both sides',
    'one text merge',
    RUNS,
    () => merge3({ base, local: bothLocal, remote: bothRemote, db, foldKey }),
  );
  await measure('diffstat, 10,000 files, one changed', 'two blob reads', RUNS, () =>
    diffstat(base, local, db),
  );

  // Increment: a 1 KiB change on top of the 10,000-file state, imported where the parent is.
  const receiver = await freshDb();
  await importPack(receiver, await createCheckpointPack(db, { head: baseHead }));
  let increment: Uint8Array = new Uint8Array();
  const heads: string[] = [];
  for (let run = 0; run < RUNS; run++) {
    const changed = new Map(base).set(pathOf(42), await db.writeBlob(fileText(42, 1000 + run)));
    heads.push(
      await db.writeCommit({
        tree: await db.writeTree(changed),
        parent: baseHead,
        message: Buffer.from(`c${run}`),
        time: 2,
      }),
    );
  }
  await measure('increment pack create, 1 KiB change', '', RUNS, async (run) => {
    increment = await createIncrementPack(db, { head: heads[run] as string, parentHead: baseHead });
  });
  const increments = await Promise.all(
    heads.map((head) => createIncrementPack(db, { head, parentHead: baseHead })),
  );
  await measure(
    'increment pack import + closure, 1 KiB change',
    `${increment.byteLength} B pack`,
    RUNS,
    async (run) => {
      await importPack(receiver, increments[run] as Uint8Array);
      await verifyClosure(receiver, heads[run] as string);
    },
  );

  let checkpoint: Uint8Array = new Uint8Array();
  await measure('checkpoint pack create, 10,000 × 1 KiB', '', 3, async () => {
    checkpoint = await createCheckpointPack(db, { head: baseHead });
  });
  await measure(
    'checkpoint pack import + closure, 10,000 × 1 KiB',
    `${(checkpoint.byteLength / 1024).toFixed(0)} KiB pack, fresh db`,
    3,
    async () => {
      const target = await freshDb();
      await importPack(target, checkpoint);
      await verifyClosure(target, baseHead);
    },
  );

  // Text merge: 10,000 lines, 50 scattered edits per side, disjoint.
  const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i} of the long note\n`);
  const edit = (offset: number) =>
    lines.map((line, i) => (i % 200 === offset ? `edited ${line}` : line)).join('');
  const [textBase, textLocal, textRemote] = [lines.join(''), edit(10), edit(110)].map((t) =>
    Buffer.from(t),
  );
  await measure('text merge, 10,000 lines, 50 edits per side', 'clean', RUNS, () =>
    mergeText(textBase as Buffer, textLocal as Buffer, textRemote as Buffer),
  );

  const width = Math.max(...rows.map((r) => r.scenario.length));
  console.log(
    `${'scenario'.padEnd(width)}  ${'median ms'.padStart(10)}  ${'min ms'.padStart(10)}  ${'cpu ms/run'.padStart(10)}  runs  note`,
  );
  for (const r of rows) {
    console.log(
      `${r.scenario.padEnd(width)}  ${r.median.toFixed(1).padStart(10)}  ${r.min.toFixed(1).padStart(10)}  ${r.cpu.toFixed(1).padStart(10)}  ${String(r.runs).padStart(4)}  ${r.note}`,
    );
  }
}

try {
  await main();
} finally {
  rmSync(root, { recursive: true, force: true });
}
