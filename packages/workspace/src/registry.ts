import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileDurably } from './durable-write';
import { privateStateUsable } from './errors';

/** The notebook directories a private root manages (contract §2 "Several notebook directories"). */
export interface Registry {
  /** Every registered directory that still exists; entries of vanished ones are pruned. */
  list(): Promise<string[]>;
  /** Registers `dir` (a realpath); idempotent. */
  add(dir: string): Promise<void>;
}

/**
 * Opens the registry under `privateRoot` (`registry/`, 0700). A registry that cannot be
 * listed or written throws `PrivateStateUnavailableError`. One file per directory, named
 * by the SHA-256 of its path and holding the path: concurrent adds from several processes
 * never overwrite each other (no read-modify-write of a shared list), and each add is an
 * atomic rename.
 */
export function openRegistry(privateRoot: string): Registry {
  const dir = join(privateRoot, 'registry');
  return {
    async list() {
      const names = await privateStateUsable(() =>
        readdir(dir).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return [] as string[];
          throw error;
        }),
      );
      const found: string[] = [];
      for (const name of names.filter((entry) => /^[0-9a-f]{64}$/.test(entry))) {
        const file = join(dir, name);
        const path = await readFile(file, 'utf8').catch(() => undefined);
        if (path === undefined) continue;
        const stats = await lstat(path).catch(() => undefined);
        if (stats?.isDirectory()) found.push(path);
        else await unlink(file).catch(() => {});
      }
      return found.sort();
    },
    async add(path) {
      const name = createHash('sha256').update(path, 'utf8').digest('hex');
      await privateStateUsable(async () => {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileDurably(join(dir, name), path, { sync: true });
      });
    },
  };
}
