import type { DirContext } from '../context';
import { changedPaths, scanLocal } from './local';
import { enterDirectory } from './sync';

/**
 * True when a managed directory holds something that is not in the accepted notebook: files
 * that differ from its baseline, files that are not notebook state, or a pending repair. The
 * caller holds the directory's lock.
 */
export async function holdsUnpublishedEdits(ctx: DirContext): Promise<boolean> {
  const entry = await enterDirectory(ctx);
  if (entry.repairPending) return true;
  const local = await scanLocal(ctx);
  return local.problems.length > 0 || changedPaths(entry.baseEntries, local.entries).length > 0;
}
