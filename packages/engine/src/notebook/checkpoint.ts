/**
 * Background checkpoints (contract §11): a closed pack for the head of the oldest `threshold`
 * increments (a stable prefix), CAS'd into a manifest that replaces that prefix and retains
 * the replaced chain. A lost CAS rewrites only the manifest while the prefix is intact; an
 * ambiguous one is resolved by the checkpoint id. Never blocks or fails a commit: every
 * failure is logged and left to a later checkpoint.
 */
import { createCheckpointPack } from '@slivingdoc/merge';
import {
  CURRENT_KEY,
  checkpointKey,
  compactIncrements,
  encodeManifest,
  type Manifest,
  newUuidV7,
  StoreError,
} from '@slivingdoc/store';
import type { DirContext } from '../context';
import { FAILPOINT, failpoint } from '../failpoints';
import { backoff } from './backoff';
import { holdsCheckpoint, prefixIntact } from './chain';
import { cleanupPacks } from './cleanup';
import { type Current, readCurrent } from './remote';
import { sha256Hex } from './sha256';

/** How a checkpoint run ended (for logs and tests). */
export type CheckpointOutcome = 'not-needed' | 'checkpointed' | 'abandoned';

/**
 * Runs one checkpoint for the store `ctx` publishes to, using `ctx`'s object database (which
 * holds every object of the heads this directory accepted). Returns how it ended; never throws.
 */
export async function runCheckpoint(ctx: DirContext): Promise<CheckpointOutcome> {
  const { store, logger, checkpointPacks: threshold } = ctx.cfg;
  try {
    let observed = await readCurrent(store);
    if (observed === undefined || observed.manifest.increments.length < threshold)
      return 'not-needed';
    const planned = observed.manifest;
    const prefixEnd = planned.increments[threshold - 1];
    if (prefixEnd === undefined) return 'abandoned';
    // Kept while the pack is built: a consolidation of the database must not drop its closure
    // (it waits for the hold, and keeps what is pinned once it runs).
    ctx.objects.pinnedHeads.add(prefixEnd.head);
    const release = await ctx.objects.access.shared();
    let pack: Uint8Array;
    try {
      if (!(await ctx.db.has(prefixEnd.head))) return 'abandoned';
      pack = await createCheckpointPack(ctx.db, { head: prefixEnd.head });
    } finally {
      release();
      ctx.objects.pinnedHeads.delete(prefixEnd.head);
    }
    const checkpointId = newUuidV7();
    const key = checkpointKey(prefixEnd.generation, checkpointId);
    const sha256 = sha256Hex(pack);
    await store.putImmutable(key, pack, {
      'slivingdoc-sha256': sha256,
      'slivingdoc-size': String(pack.byteLength),
      'slivingdoc-kind': 'checkpoint',
      'slivingdoc-generation': String(prefixEnd.generation),
    });
    await failpoint(ctx.cfg.failpoints, FAILPOINT.afterCheckpointPackUpload);
    for (let attempt = 0; attempt <= ctx.cfg.commitRetries; attempt += 1) {
      if (attempt > 0) await backoff(attempt - 1, ctx.cfg.clock);
      if (observed === undefined || !prefixIntact(planned, observed.manifest, threshold))
        return 'abandoned';
      const proposal = compactIncrements(observed.manifest, {
        checkpointId,
        count: threshold,
        retainedLimit: ctx.cfg.retainedCheckpoints,
        sha256,
        size: BigInt(pack.byteLength),
      });
      const landed = await casCheckpoint(ctx, observed, proposal, checkpointId);
      await failpoint(ctx.cfg.failpoints, FAILPOINT.afterCheckpointCas);
      if (landed === 'accepted') {
        logger.info({ generation: Number(proposal.generation) }, 'checkpoint accepted');
        await cleanupPacks(ctx).catch((err: unknown) =>
          logger.warn({ err }, 'pack cleanup failed'),
        );
        return 'checkpointed';
      }
      if (landed === 'unproven') return 'abandoned';
      observed = await readCurrent(store);
    }
    return 'abandoned';
  } catch (err) {
    logger.warn({ err }, 'checkpoint abandoned');
    return 'abandoned';
  }
}

async function casCheckpoint(
  ctx: DirContext,
  observed: Current,
  proposal: Manifest,
  checkpointId: string,
): Promise<'accepted' | 'lost' | 'unproven'> {
  try {
    await ctx.cfg.store.replaceIfMatch(CURRENT_KEY, encodeManifest(proposal), observed.etag);
    return 'accepted';
  } catch (err) {
    if (err instanceof StoreError && (err.kind === 'unreachable' || err.kind === 'access-denied'))
      throw err;
    const now = await readCurrent(ctx.cfg.store);
    if (now !== undefined && holdsCheckpoint(now.manifest, checkpointId)) return 'accepted';
    if (err instanceof StoreError && err.kind === 'precondition-failed') return 'lost';
    return now?.etag === observed.etag ? 'lost' : 'unproven';
  }
}
