/** Test fixtures: temporary workspace and private roots, a store, services, file helpers. */
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createMemoryStore, type MemoryStore, type ObjectStore } from '@slivingdoc/store';
import { afterEach, expect } from 'vitest';
import { createNotebookService, type EngineConfig, type NotebookService } from '../src/index';
import type { BackoffClock } from '../src/notebook/backoff';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** No real waiting between CAS attempts: tests stay fast and deterministic. */
export const INSTANT_CLOCK: BackoffClock = { random: () => 0, sleep: async () => {} };

/** A temporary base directory with `ws/` (workspace root) and `priv/` (private root). */
export async function tempRoots(): Promise<{
  base: string;
  workspaceRoot: string;
  privateRoot: string;
}> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'engine-test-')));
  const workspaceRoot = join(base, 'ws');
  const privateRoot = join(base, 'priv');
  await mkdir(workspaceRoot, { recursive: true });
  cleanups.push(() => rm(base, { recursive: true, force: true }));
  return { base, workspaceRoot, privateRoot };
}

/** One participant: its own workspace root, private root and service, sharing `store`. */
export interface Participant {
  service: NotebookService;
  dir: string;
  privateRoot: string;
  workspaceRoot: string;
}

/** A service on `roots` whose notebook directory is `<ws>/notebook` (the caller closes it). */
export function openOnRoots(
  store: ObjectStore,
  roots: { privateRoot: string; workspaceRoot: string },
  extra: Partial<EngineConfig> = {},
): Promise<NotebookService> {
  return createNotebookService({
    store,
    privateRoot: roots.privateRoot,
    workspaceRoot: roots.workspaceRoot,
    notebookDir: join(roots.workspaceRoot, 'notebook'),
    clock: INSTANT_CLOCK,
    lockTimeoutMs: 5_000,
    ...extra,
  });
}

/** Opens a participant whose notebook directory is `<ws>/notebook`. */
export async function participant(
  store: ObjectStore,
  extra: Partial<EngineConfig> = {},
): Promise<Participant> {
  const roots = await tempRoots();
  const dir = join(roots.workspaceRoot, 'notebook');
  const service = await openOnRoots(store, roots, extra);
  cleanups.push(() => service.close());
  return { service, dir, privateRoot: roots.privateRoot, workspaceRoot: roots.workspaceRoot };
}

/** Alice (opened with `aliceConfig`) publishes `a.md`; Bob, on the same store, then pulls it. */
export async function aliceAndBob(
  store: ObjectStore,
  aliceConfig: Partial<EngineConfig> = {},
): Promise<{ alice: Participant; bob: Participant }> {
  const alice = await participant(store, aliceConfig);
  const bob = await participant(store);
  await alice.service.pull({});
  await put(alice.dir, 'a.md', 'a\n');
  await alice.service.commit({ message: 'a' });
  await bob.service.pull({});
  return { alice, bob };
}

/** A fresh in-memory store. */
export function memoryStore(): MemoryStore {
  return createMemoryStore({ prefix: 'nb' });
}

/** Writes a file below `dir`, creating parents. */
export async function put(dir: string, path: string, text: string): Promise<void> {
  await mkdir(dirname(join(dir, path)), { recursive: true });
  await writeFile(join(dir, path), text);
}

/** Reads a file below `dir` as text. */
export function get(dir: string, path: string): Promise<string> {
  return readFile(join(dir, path), 'utf8');
}

/** Every file below `dir` (notebook paths → text), skipping nothing. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out[relative(dir, full).split('\\').join('/')] = await readFile(full, 'utf8');
    }
  };
  await walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * Awaits a rejection and returns it (fails the test when the promise resolves). An
 * ENGINE_FAILED fails the test with its cause: its diff against the expected refusal would not
 * show why the engine failed. A test that expects one awaits {@link engineFailure}.
 */
export async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const failure = await anyRejection(promise);
  if (failure.code === 'ENGINE_FAILED') {
    const cause = failure.cause as Error | undefined;
    throw new Error(
      `unexpected ENGINE_FAILED · ${String(failure.reason)}: ${cause?.stack ?? String(cause)}`,
    );
  }
  return failure;
}

/** Awaits a rejection that must be ENGINE_FAILED and returns it. */
export async function engineFailure(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const failure = await anyRejection(promise);
  expect(failure.code).toBe('ENGINE_FAILED');
  return failure;
}

async function anyRejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

/** The state.json of the only P below `privateRoot`. */
export async function stateFile(privateRoot: string): Promise<string> {
  const [key] = await readdir(join(privateRoot, 'notebooks'));
  if (key === undefined) throw new Error('no private state');
  return join(privateRoot, 'notebooks', key, 'state.json');
}
