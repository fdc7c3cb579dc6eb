/**
 * Generation-fenced pack cleanup (contract §11). Lists only the pack namespaces; considers only
 * keys whose chain position is at or before the cutoff — the active checkpoint's
 * `throughGeneration` of a freshly re-read `current`, because every proposal that can still
 * land (one conditioned on that `current`) targets a later position; re-reads `current`
 * before each batch of at most 1,000 deletions; never deletes a key referenced by the active
 * or a retained chain; never touches `current`.
 */
import { DELETE_BATCH_SIZE, type Manifest, PACKS_NAMESPACE, parsePackKey } from '@slivingdoc/store';
import type { DirContext } from '../context';
import { FAILPOINT, failpoint } from '../failpoints';
import { referencedKeys } from './chain';
import { readCurrent } from './remote';

/** The keys of `candidates` that `manifest` allows deleting. */
export function deletable(manifest: Manifest, candidates: string[]): string[] {
  const cutoff = manifest.checkpoint.throughGeneration;
  const referenced = referencedKeys(manifest);
  return candidates.filter((key) => {
    const position = parsePackKey(key)?.number;
    return position !== undefined && position <= cutoff && !referenced.has(key);
  });
}

/** Deletes unreferenced packs at or before the cutoff; returns how many were deleted. */
export async function cleanupPacks(ctx: DirContext): Promise<number> {
  const { store } = ctx.cfg;
  const listed = (await store.list(PACKS_NAMESPACE)).map((entry) => entry.key);
  let deleted = 0;
  for (let start = 0; start < listed.length; start += DELETE_BATCH_SIZE) {
    const current = await readCurrent(store);
    if (current === undefined) return deleted;
    const batch = deletable(current.manifest, listed.slice(start, start + DELETE_BATCH_SIZE));
    if (batch.length === 0) continue;
    await failpoint(ctx.cfg.failpoints, FAILPOINT.beforeCleanupDelete);
    await store.deleteMany(batch);
    deleted += batch.length;
  }
  if (deleted > 0) ctx.cfg.logger.info({ deleted }, 'unreferenced packs deleted');
  return deleted;
}
