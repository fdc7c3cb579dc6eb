import { constants, open } from 'node:fs/promises';
import { ConcurrentEditError } from './errors';
import { SecureDir } from './secure-dir';
import { type FileStamp, sameStamp, stampOf } from './stamp';

/**
 * Reads the notebook file `path` below `root` without following any link, and only if it
 * still has `stamp`; otherwise (changed, gone, or a component swapped for a link) throws
 * {@link ConcurrentEditError}.
 */
export async function readSecurely(root: string, path: string, stamp: FileStamp): Promise<Buffer> {
  const segments = path.split('/');
  const name = segments.pop()!;
  let dir = await SecureDir.open(root);
  try {
    for (const segment of segments) {
      const child = await dir.openChild(segment).catch(concurrentEdit(path));
      await dir.close();
      dir = child;
    }
    const handle = await open(
      dir.child(name),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    ).catch(concurrentEdit(path));
    try {
      if (!sameStamp(stampOf(await handle.stat({ bigint: true })), stamp)) {
        throw new ConcurrentEditError([path]);
      }
      const content = await handle.readFile();
      if (!sameStamp(stampOf(await handle.stat({ bigint: true })), stamp)) {
        throw new ConcurrentEditError([path]);
      }
      return content;
    } finally {
      await handle.close();
    }
  } finally {
    await dir.close();
  }
}

/** Maps "the tree is not what the scan saw" errno values onto {@link ConcurrentEditError}. */
export function concurrentEdit(path: string) {
  return (error: NodeJS.ErrnoException): never => {
    if (['ELOOP', 'ENOTDIR', 'ENOENT', 'EISDIR'].includes(error.code ?? '')) {
      throw new ConcurrentEditError([path]);
    }
    throw error;
  };
}
