/**
 * The accepted baseline recorded in P's state.json and the recovery flag around every rewrite
 * of L (contract §10).
 */
import type { StateV1 } from '@slivingdoc/workspace';
import type { CallState, DirContext } from '../context';
import type { Baseline } from '../notebook/baseline';

/** The baseline a state record names. */
export function baselineOf(state: StateV1): Baseline {
  return { generation: state.remoteGeneration, head: state.baselineHead, tree: state.baselineTree };
}

function record(ctx: DirContext, baseline: Baseline, recoveryRequired: boolean): StateV1 {
  return {
    version: 1,
    identity: ctx.cfg.store.identity,
    remoteGeneration: baseline.generation,
    baselineHead: baseline.head,
    baselineTree: baseline.tree,
    recoveryRequired,
  };
}

/** Durably sets the recovery flag (keeping the previous baseline for the repair) before L changes. */
export async function raiseRecoveryFlag(
  ctx: DirContext,
  call: CallState,
  previous: Baseline,
): Promise<void> {
  await ctx.priv.writeState(record(ctx, previous, true));
  call.mutationStarted = true;
}

/** Durably records the new baseline and clears the flag in one atomic state write. */
export async function recordBaseline(
  ctx: DirContext,
  call: CallState,
  next: Baseline,
): Promise<void> {
  await ctx.priv.writeState(record(ctx, next, false));
  call.mutationStarted = false;
}
