import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real, small file system (tmpfs) that a test fills to ENOSPC and frees again. */
export interface SmallDisk {
  /** Its mount point. */
  readonly path: string;
  /** Writes a filler file until the file system answers ENOSPC. */
  fill(): Promise<void>;
  /** Removes the filler: the space is back. */
  free(): Promise<void>;
  /** Unmounts and removes the mount point (its contents go with it). */
  unmount(): Promise<void>;
}

/**
 * Mounts a tmpfs of `sizeKiB` KiB. Mounting needs root: without it this throws (the test
 * fails loudly, it never skips); the test command runs as root (docs/reliability.md).
 */
export async function mountSmallDisk(sizeKiB: number): Promise<SmallDisk> {
  if (process.getuid?.() !== 0) {
    throw new Error('the disk-full tests mount a real tmpfs and must run as root');
  }
  const path = await mkdtemp(join(tmpdir(), 'slivingdoc-small-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0755`, 'tmpfs', path]);
  const filler = join(path, 'filler');
  return {
    path,
    async fill() {
      const handle = await open(filler, 'a');
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      try {
        for (;;) {
          try {
            await handle.write(chunk);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw err;
          }
        }
        // The chunked writes stop within 64 KiB of full; single bytes take the rest.
        for (;;) {
          try {
            await handle.write(Buffer.from('x'));
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return;
            throw err;
          }
        }
      } finally {
        await handle.close();
      }
    },
    async free() {
      await rm(filler, { force: true });
    },
    async unmount() {
      execFileSync('umount', [path]);
      await rmdir(path);
    },
  };
}
