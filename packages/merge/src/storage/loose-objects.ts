import { randomUUID } from 'node:crypto';
import type * as NodeFs from 'node:fs';
import { frameObject, type GitObject, type Oid } from '../model/object-format';
import { deflateObject } from '../model/pack-format';
import type { GitDir } from './git-dir';

/**
 * Writes one loose object in git's layout (`objects/xx/rest`, zlib of `type size\0content`),
 * by hand rather than with isomorphic-git's `writeObject`: that call builds a new file-system
 * wrapper per call (whose promise probe throws twice) and makes several asynchronous calls,
 * each queued behind concurrent fsyncs in Node's 4-thread pool, inside a commit's
 * read-current → CAS window. A few synchronous page-cache writes take microseconds. Written
 * to a temp name and renamed, so a reader never sees a torn object (isomorphic-git writes in
 * place); like isomorphic-git, no fsync: P's objects are re-fetched or repaired when a crash
 * tears them (closure check), and the store holds every published object durably.
 */
export function writeLooseObject(dir: GitDir, oid: Oid, object: GitObject): void {
  const fs = dir.fs as unknown as typeof NodeFs;
  const fanout = `${dir.gitdir}/objects/${oid.slice(0, 2)}`;
  const path = `${fanout}/${oid.slice(2)}`;
  if (fs.existsSync(path)) return;
  const deflated = deflateObject(frameObject(object.type, object.content));
  const temp = `${fanout}/tmp-${randomUUID()}`;
  try {
    try {
      fs.writeFileSync(temp, deflated);
    } catch (error) {
      // The fan-out directory is created on first use only: under concurrent fsyncs even a
      // mkdir of an existing directory can wait for the journal and block the event loop.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      fs.mkdirSync(fanout, { recursive: true });
      fs.writeFileSync(temp, deflated);
    }
    fs.renameSync(temp, path);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
