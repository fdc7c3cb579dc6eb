/**
 * What one publication of the notebook names (its generation, head and tree), the state a
 * directory's unpublished edits are based on, and the rolled-back check of contract §7.
 */
import { EMPTY_TREE } from '../context';
import { integrityFailure } from '../errors';

/** What a directory's unpublished edits are based on: one accepted remote state. */
export interface Baseline {
  /** The manifest generation it was accepted or observed at (0: no remote state). */
  generation: bigint;
  /** Its head commit ('' when there is none). */
  head: string;
  /** Its tree. */
  tree: string;
}

/** The baseline of a directory that never saw remote state. */
export const EMPTY_BASELINE: Baseline = { generation: 0n, head: '', tree: EMPTY_TREE };

/** The remote view the rolled-back check needs. */
export interface ObservedRemote {
  generation: bigint;
  head: string;
}

/**
 * contract §7: `current` absent while the baseline is above 0, older than the baseline, or equal
 * with another head means the store was wiped or rolled back. Fails before L is touched.
 */
export function assertNotRolledBack(
  baseline: Baseline | undefined,
  observed: ObservedRemote | undefined,
): void {
  if (baseline === undefined || baseline.generation === 0n) return;
  const rolledBack =
    observed === undefined ||
    observed.generation < baseline.generation ||
    (observed.generation === baseline.generation && observed.head !== baseline.head);
  if (rolledBack) {
    throw integrityFailure(
      'REMOTE_ROLLED_BACK',
      observed === undefined
        ? "The store no longer holds the notebook this directory was synchronised with (it was wiped); the notebook directory was left untouched. Deleting this directory's private state accepts the store as it now is."
        : "The store holds an older notebook than this directory was synchronised with (it was rolled back); the notebook directory was left untouched. Deleting this directory's private state accepts the store as it now is.",
    );
  }
}
