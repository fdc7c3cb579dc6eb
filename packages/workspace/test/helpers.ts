import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh real temporary directory (realpath), removed by the returned cleanup. */
export async function tempDir(
  prefix: string,
): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  // GNU rm walks with openat, so trees deeper than PATH_MAX are removed too.
  return { path, cleanup: async () => void execFileSync('rm', ['-rf', path]) };
}

/** Writes `files` (notebook path → content) below `root`, creating directories. */
export async function writeTree(root: string, files: Record<string, string | Uint8Array>) {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    await mkdir(join(full, '..'), { recursive: true });
    await writeFile(full, content);
  }
}

/**
 * Creates `segments` as nested directories below `root` and a file `name` in the deepest,
 * through /proc/self/fd paths so the absolute path may exceed PATH_MAX.
 */
export async function writeDeepFile(
  root: string,
  segments: string[],
  name: string,
  content: string,
) {
  let dir = await open(root, constants.O_RDONLY | constants.O_DIRECTORY);
  for (const segment of segments) {
    await mkdir(`/proc/self/fd/${dir.fd}/${segment}`);
    const child = await open(
      `/proc/self/fd/${dir.fd}/${segment}`,
      constants.O_RDONLY | constants.O_DIRECTORY,
    );
    await dir.close();
    dir = child;
  }
  await writeFile(`/proc/self/fd/${dir.fd}/${name}`, content);
  await dir.close();
}
