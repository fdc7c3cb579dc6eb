import { mkdir, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { overlaps } from '../config/paths';
import { configuration } from '../config/refusal';
import { driverOf } from '../config/store-registry';
import type { AppConfig } from '../config/types';

/** The directories one process works with, resolved once at startup (contract §2). */
export interface Roots {
  /** realpath of the workspace root. */
  workspaceRoot: string;
  /** realpath of the server's own notebook directory (serve) or of the workspace root. */
  notebookDir: string;
  privateRoot: string;
  /** The session directory `serve` created (absent with a configured workspace root). */
  session?: string;
}

/**
 * contract §2: serve without a workspace root creates `<tmpdir>/slivingdoc-XXXXXX` (0700, by
 * mkdtemp) with `notebook/` (workspace root and notebook directory) and `private/` (the
 * private root unless one is configured). At exit it is removed unless it holds unpublished
 * edits (`session-dir.ts`, docs/hosts.md "Session directories").
 */
export async function createSessionRoots(config: AppConfig): Promise<Roots> {
  const session = await mkdtemp(join(tmpdir(), 'slivingdoc-'));
  await mkdir(join(session, 'notebook'), { mode: 0o755 });
  await mkdir(join(session, 'private'), { mode: 0o700 });
  const notebookDir = await realpath(join(session, 'notebook'));
  return checked(config, {
    workspaceRoot: notebookDir,
    notebookDir,
    privateRoot: config.privateRoot ?? (await realpath(join(session, 'private'))),
    session: await realpath(session),
  }).catch(async (error: unknown) => {
    await rm(session, { recursive: true, force: true });
    throw error;
  });
}

/**
 * The roots of a long-running command (`serve`, `serve --listen`, `view`): the configured
 * workspace root, or a fresh session directory without one.
 */
export function serverRoots(config: AppConfig): Promise<Roots> {
  return config.workspaceRoot === undefined
    ? createSessionRoots(config)
    : configuredRoots(config, config.workspaceRoot, config.privateRoot!);
}

/** A configured workspace root: it must exist and be a directory. */
export async function configuredRoots(
  config: AppConfig,
  workspaceRoot: string,
  privateRoot: string,
): Promise<Roots> {
  const info = await stat(workspaceRoot).catch(() => undefined);
  if (info === undefined) throw configuration(`the workspace root ${workspaceRoot} does not exist`);
  if (!info.isDirectory())
    throw configuration(`the workspace root ${workspaceRoot} is not a directory`);
  const real = await realpath(workspaceRoot);
  return checked(config, {
    workspaceRoot: real,
    notebookDir: real,
    privateRoot,
  });
}

/**
 * Repeats the lexical overlap check of parsing on real paths, so a symlink cannot make the
 * private root or the store directory land inside the workspace root (contract §4, §12).
 */
async function checked(config: AppConfig, roots: Roots): Promise<Roots> {
  const privateRoot = await realpathOfNearest(roots.privateRoot);
  if (overlaps(privateRoot, roots.workspaceRoot)) {
    throw configuration(
      `the private root ${privateRoot} and the workspace root ${roots.workspaceRoot} overlap`,
    );
  }
  const localDir = driverOf(config.store).localDirectory(config.store);
  if (localDir !== undefined) {
    const storeDir = await realpathOfNearest(localDir);
    if (overlaps(storeDir, roots.workspaceRoot)) {
      throw configuration(
        `the store directory ${storeDir} and the workspace root ${roots.workspaceRoot} overlap`,
      );
    }
  }
  return { ...roots, privateRoot };
}

/** realpath of the nearest existing ancestor, with the missing tail appended. */
async function realpathOfNearest(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathOfNearest(parent), basename(path));
  }
}
