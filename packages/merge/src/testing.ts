/**
 * `@slivingdoc/merge/testing`: an object database held entirely in memory, for tests (of this
 * package and the layers above). A subpath of its own because it needs memfs, which is a
 * development dependency only (an optional peer for anyone importing this subpath), so
 * installing the library or the app never installs it.
 */
import { createFsFromVolume, Volume } from 'memfs';
import type { GitFs } from './storage/git-dir';
import { GitObjectDb, type ObjectDb } from './storage/object-db';

/** An object database held entirely in memory: every code path of the on-disk one. */
export function openMemoryObjectDb(): ObjectDb {
  const fs = createFsFromVolume(new Volume());
  fs.mkdirSync('/git/objects/pack', { recursive: true });
  return new GitObjectDb(fs as unknown as GitFs, '/git');
}

export type { GitObject } from './model/object-format';
/** The pack codec, for tests above this package that assemble a pack by hand. */
export { encodePack, scanPack } from './model/pack-format';
