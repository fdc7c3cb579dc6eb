/**
 * One soak writer process: pulls, then makes `commits` commits of random line insertions
 * into its own file and into shared files (often at the top, so writers overlap), resolving
 * every conflict by keeping both sides and retrying every retryable answer. It records each
 * line it was told OK about and writes its ledger as JSON when done.
 *
 * Run as `node --import tsx --conditions=@slivingdoc/source writer.ts '<WriterConfig JSON>'`.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createNotebookService, type NotebookService } from '@slivingdoc/engine';
import { isDomainError } from '@slivingdoc/envelope';
import { seededRandom } from '@slivingdoc/testkit/seeded-random';
import { isRetryable } from '../catalogue';
import { openStore, type StoreSpec } from '../store-spec';
import { countingStore } from './counting-store';
import { insertLine, readText } from './edits';
import type { AcknowledgedLine, WriterLedger } from './ledger';
import { keepBothSides } from './resolve';

/** Everything one writer needs (serialised into its argv). */
export interface WriterConfig {
  writer: number;
  commits: number;
  seed: number;
  sharedFiles: number;
  workspaceRoot: string;
  notebookDir: string;
  privateRoot: string;
  store: StoreSpec;
  ledgerPath: string;
  /** The writer announces `ready-<writer>` here, then waits for `go`, so all writers start together. */
  barrierDir: string;
  commitRetries: number;
  checkpointPacks: number;
}

/** The most answers one commit may take before the writer gives up and reports it. */
const MAX_ATTEMPTS = 200;

async function run(cfg: WriterConfig): Promise<WriterLedger> {
  const random = seededRandom(cfg.seed);
  const { store, lostRaces } = countingStore(await openStore(cfg.store));
  await mkdir(cfg.notebookDir, { recursive: true });
  const service: NotebookService = await createNotebookService({
    store,
    privateRoot: cfg.privateRoot,
    workspaceRoot: cfg.workspaceRoot,
    notebookDir: cfg.notebookDir,
    commitRetries: cfg.commitRetries,
    checkpointPacks: cfg.checkpointPacks,
    // As the app runs: the publication gate with group commit (docs/engine.md).
    publicationGateMs: 30_000,
    groupCommit: true,
  });
  const ledger: WriterLedger = {
    writer: cfg.writer,
    acknowledged: [],
    resolutions: [],
    totals: { commits: 0, conflicts: 0, retries: 0, remoteBusy: 0, transient: 0 },
    publishedGenerations: [],
    anomalies: [],
  };
  const dir = cfg.notebookDir;

  /** Runs one call through every retryable answer; conflicts are resolved by keeping both sides. */
  async function settle(call: () => Promise<{ generation: number | string; files: unknown[] }>) {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (!isDomainError(err)) throw err;
        if (err.code === 'CONTENT_CONFLICT') {
          ledger.totals.conflicts += 1;
          for (const issue of err.files) {
            if (issue.reason !== 'TEXT_CONFLICT' && issue.reason !== 'MARKER_BLOCK') {
              ledger.anomalies.push(
                `unexpected conflict file reason ${issue.reason} on ${issue.path}`,
              );
              continue;
            }
            const path = join(dir, issue.path);
            const resolved = keepBothSides(await readText(path), issue.ranges);
            await writeFile(path, resolved.text);
            ledger.resolutions.push({ file: issue.path, removed: resolved.removed });
          }
        } else if (err.code === 'REMOTE_BUSY') {
          ledger.totals.remoteBusy += 1;
        } else if (isRetryable(err.code, err.reason)) {
          ledger.totals.transient += 1;
          if (err.reason === 'PUBLICATION_UNPROVEN') await service.pull({}).catch(() => undefined);
        } else {
          ledger.anomalies.push(`${err.code} · ${err.reason}: ${err.message}`);
          throw err;
        }
      }
    }
    throw new Error(`no OK after ${MAX_ATTEMPTS} attempts`);
  }

  await settle(() => service.pull({}));
  await writeFile(join(cfg.barrierDir, `ready-${cfg.writer}`), '');
  while (!existsSync(join(cfg.barrierDir, 'go'))) await new Promise((r) => setTimeout(r, 20));
  let pending: Omit<AcknowledgedLine, 'generation'>[] = [];
  for (let c = 0; c < cfg.commits; c++) {
    const edits = 1 + Math.floor(random() * 3);
    for (let e = 0; e < edits; e++) {
      const own = random() < 0.4;
      const file = own
        ? `writers/w${cfg.writer}.md`
        : `shared/s${Math.floor(random() * cfg.sharedFiles)}.md`;
      // Mostly near the top so concurrent writers touch the same or adjacent lines.
      const at = random() < 0.7 ? Math.floor(random() * 3) : Math.floor(random() * 1000);
      const line = `w${cfg.writer} c${c} e${e} ${random().toString(36).slice(2, 8)}`;
      await insertLine(dir, file, line, at);
      pending.push({ file, line });
    }
    const result = await settle(() => service.commit({ message: `soak w${cfg.writer} c${c}` }));
    ledger.totals.commits += 1;
    if (result.files.length > 0) ledger.publishedGenerations.push(Number(result.generation));
    for (const p of pending)
      ledger.acknowledged.push({ ...p, generation: Number(result.generation) });
    pending = [];
  }
  ledger.totals.retries = lostRaces();
  await service.close();
  await store.close?.();
  return ledger;
}

const cfg = JSON.parse(process.argv[2] ?? '') as WriterConfig;
run(cfg).then(
  (ledger) => writeFile(cfg.ledgerPath, JSON.stringify(ledger)),
  (err: unknown) => {
    process.stderr.write(
      `soak writer ${cfg.writer} failed: ${err instanceof Error ? err.stack : String(err)}\n`,
    );
    process.exitCode = 1;
  },
);
