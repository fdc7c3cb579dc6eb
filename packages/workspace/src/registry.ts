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
  // An entry's name is the hash of its path and its content that path, so a name read once is
  // known for good: a process serving many directories (serve --listen: one per session) lists
  // the registry on every call, and re-reading every entry made each call O(directories) reads
  // (a hundred sessions: ~100 opens per call). The directory listing and the lstat of each
  // path still run every time, so entries other processes add or prune are seen at once.
  const known = new Map<string, string>();
  const listNow = async (): Promise<string[]> => {
    const names = await privateStateUsable(() =>
      readdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      }),
    );
    const found: string[] = [];
    for (const name of names.filter((entry) => /^[0-9a-f]{64}$/.test(entry))) {
      const file = join(dir, name);
      const path = known.get(name) ?? (await readFile(file, 'utf8').catch(() => undefined));
      if (path === undefined) continue;
      const stats = await lstat(path).catch(() => undefined);
      if (stats?.isDirectory()) {
        known.set(name, path);
        found.push(path);
      } else {
        known.delete(name);
        await unlink(file).catch(() => {});
      }
    }
    return found.sort();
  };
  // Calls that arrive while a listing runs share the next one, started when it ends: each
  // caller still gets a listing begun after its call (it sees every entry added before), and
  // a hundred sessions committing at once list a few times instead of twice each (a listing
  // lstat()s every directory, so one per call made a burst of n sessions O(n²) lstats).
  let running: Promise<string[]> | undefined;
  let queued: Promise<string[]> | undefined;
  const start = (): Promise<string[]> => {
    const run = listNow();
    running = run;
    const clear = () => {
      if (running === run) running = undefined;
    };
    run.then(clear, clear);
    return run;
  };
  const shared = (): Promise<string[]> => {
    if (queued !== undefined) return queued;
    if (running === undefined) return start();
    const next = () => {
      queued = undefined;
      return start();
    };
    queued = running.then(next, next);
    return queued;
  };
  return {
    // A copy each: callers share one listing.
    list: () => shared().then((dirs) => [...dirs]),
    async add(path) {
      const name = createHash('sha256').update(path, 'utf8').digest('hex');
      await privateStateUsable(async () => {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileDurably(join(dir, name), path, { sync: true });
      });
    },
  };
}
