import type * as IsomorphicGit from 'isomorphic-git';

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
