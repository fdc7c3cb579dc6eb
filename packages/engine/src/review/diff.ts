/** A proposal's change as per-file diffs against its base (for `proposals show` and the view). */
import { lineDiffStat } from '@slivingdoc/merge';
import { asText, type FileDiff, hunksOf } from '../notebook/inspect';
import type { ProposalRecord } from './record';

const EMPTY = new Uint8Array(0);

/** One file's diff from `before` to `after` (null: absent on that side). */
export function bytesDiff(
  path: string,
  before: Uint8Array | null,
  after: Uint8Array | null,
): FileDiff {
  const from = asText(before ?? EMPTY);
  const to = asText(after ?? EMPTY);
  const binary = from === undefined || to === undefined;
  const stat = lineDiffStat(before ?? EMPTY, after ?? EMPTY);
  return {
    path,
    change: before === null ? 'added' : after === null ? 'deleted' : 'modified',
    insertions: stat.insertions,
    deletions: stat.deletions,
    binary,
    hunks: binary ? [] : hunksOf(path, from, to),
  };
}

/** Each changed file's diff from its base bytes to its proposed bytes. */
export function proposalDiffs(record: ProposalRecord): FileDiff[] {
  return record.files.map((file) => bytesDiff(file.path, file.base, file.content));
}
