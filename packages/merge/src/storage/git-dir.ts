import type * as IsomorphicGit from 'isomorphic-git';
import type { GitObject, Oid } from '../model/object-format';
import { NEEDS_ISOMORPHIC_GIT, readObjectFile } from './object-files';

/** The file system isomorphic-git works on: Node's (P on disk) or memfs (in memory). */
export type GitFs = Parameters<typeof IsomorphicGit.readObject>[0]['fs'];

let loading: Promise<typeof IsomorphicGit> | undefined;

/**
 * isomorphic-git, imported on first use rather than with this module: it holds about 11 MiB
 * resident once loaded, which a server that reads only the layouts our own code writes
 * should not pay (docs/performance.md, "Idle memory and start-up").
 */
export function loadIsomorphicGit(): Promise<typeof IsomorphicGit> {
  loading ??= import('isomorphic-git');
  return loading;
}

/** One bare git directory and what every isomorphic-git call on it needs. */
export interface GitDir {
  readonly fs: GitFs;
  /** The git directory (bare layout). */
  readonly gitdir: string;
  /** isomorphic-git's cache object, one per database, passed to every call (pack indexes). */
  readonly cache: object;
}

/**
 * Reads one object, loose or packed. Loose files and whole objects in packs (all our writers
 * produce) are read by our own code (`object-files.ts`); a delta entry of a foreign pack (the
 * Go implementation's libgit2 packs) is read through isomorphic-git, which resolves deltas.
 * Undefined when absent or of a type the notebook never stores; a corrupt object throws.
 */
export async function readGitObject(dir: GitDir, oid: Oid): Promise<GitObject | undefined> {
  const own = readObjectFile(dir, oid);
  if (own !== NEEDS_ISOMORPHIC_GIT) return own;
  const git = await loadIsomorphicGit();
  try {
    const { type, object } = await git.readObject({
      fs: dir.fs,
      gitdir: dir.gitdir,
      oid,
      format: 'content',
      cache: dir.cache,
    });
    if (type !== 'blob' && type !== 'tree' && type !== 'commit') return undefined;
    return { type, content: object as Uint8Array };
  } catch (error) {
    if (error instanceof git.Errors.NotFoundError) return undefined;
    throw error;
  }
}
