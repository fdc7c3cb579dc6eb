import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNotebookService } from '@slivingdoc/engine';
import { CURRENT_KEY, decodeManifest } from '@slivingdoc/store';
import { toolingDir, tsxChildArgs } from '../child';
import { openStore, type StoreSpec } from '../store-spec';
import { checkSoak, type SoakReport } from './checker';
import type { WriterLedger } from './ledger';
import type { WriterConfig } from './writer';

/** Size and target of one soak run. */
export interface SoakOptions {
  writers: number;
  commits: number;
  /** Store to share; its prefix is made unique per run. */
  store: StoreSpec;
  sharedFiles?: number;
  seed?: number;
  commitRetries?: number;
  checkpointPacks?: number;
}

const WRITER = fileURLToPath(new URL('./writer.ts', import.meta.url));

function runWriter(cfg: WriterConfig): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...tsxChildArgs(), WRITER, JSON.stringify(cfg)], {
      cwd: toolingDir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Creates `go` once every writer announced itself (or one of them already ended). */
async function startWhenReady(runDir: string, writers: number, running: Promise<unknown>[]) {
  let ended = false;
  void Promise.race(running).then(() => {
    ended = true;
  });
  for (;;) {
    const ready = (await readdir(runDir)).filter((n) => n.startsWith('ready-')).length;
    if (ready === writers || ended) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await writeFile(join(runDir, 'go'), '');
}

async function readTree(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    files.set(relative(dir, full), await readFile(full, 'utf8'));
  }
  return files;
}

/**
 * Runs `writers` writer processes of `commits` commits each against one shared store, then
 * pulls the final notebook into a fresh directory and checks every ledger against it.
 */
export async function runSoak(
  opts: SoakOptions,
): Promise<SoakReport & { manifestGeneration: number; runDir: string }> {
  const runDir = await mkdtemp(join(tmpdir(), 'slivingdoc-soak-'));
  const workspaceRoot = join(runDir, 'ws');
  await mkdir(workspaceRoot, { recursive: true });
  const store: StoreSpec = {
    ...opts.store,
    prefix: `${opts.store.prefix}/${relative(tmpdir(), runDir)}`,
  };
  const configs: WriterConfig[] = Array.from({ length: opts.writers }, (_, writer) => ({
    writer,
    commits: opts.commits,
    seed: (opts.seed ?? 1) * 1000 + writer,
    sharedFiles: opts.sharedFiles ?? 3,
    workspaceRoot,
    notebookDir: join(workspaceRoot, `w${writer}`),
    privateRoot: join(runDir, 'private', `w${writer}`),
    store,
    ledgerPath: join(runDir, `ledger-${writer}.json`),
    barrierDir: runDir,
    commitRetries: opts.commitRetries ?? 8,
    checkpointPacks: opts.checkpointPacks ?? 1024,
  }));
  const running = configs.map(runWriter);
  const release = startWhenReady(runDir, opts.writers, running);
  const outcomes = await Promise.all(running);
  await release;
  const failures = outcomes.filter((o) => o.code !== 0);
  if (failures.length > 0) {
    throw new Error(
      `${failures.length} soak writer(s) failed:\n${failures.map((f) => f.stderr).join('\n')}`,
    );
  }
  const ledgers = await Promise.all(
    configs.map(async (c) => JSON.parse(await readFile(c.ledgerPath, 'utf8')) as WriterLedger),
  );
  const finalDir = join(workspaceRoot, 'final');
  await mkdir(finalDir);
  const reader = await openStore(store);
  const service = await createNotebookService({
    store: reader,
    privateRoot: join(runDir, 'private', 'final'),
    workspaceRoot,
    notebookDir: finalDir,
  });
  await service.pull({});
  await service.close();
  const current = await reader.get(CURRENT_KEY);
  await reader.close?.();
  // `current` must validate; every publishing OK took its own generation at or below it.
  const manifestGeneration =
    current === undefined ? 0 : Number(decodeManifest(current.body).generation);
  return { ...checkSoak(ledgers, await readTree(finalDir)), manifestGeneration, runDir };
}
