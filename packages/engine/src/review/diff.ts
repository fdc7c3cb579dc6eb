/** A proposal's change as per-file diffs against its base (for `proposals show` and the view). */
import { lineDiffStat } from '@slivingdoc/merge';
import { asText, type FileDiff, hunksOf } from '../notebook/inspect';
import type { ProposalRecord } from './record';

const EMPTY = new Uint8Array(0);

/** Each changed file's diff from its base bytes to its proposed bytes. */
export function proposalDiffs(record: ProposalRecord): FileDiff[] {
  return record.files.map((file) => {
    const base = file.base ?? EMPTY;
    const content = file.content ?? EMPTY;
    const before = asText(base);
    const after = asText(content);
    const binary = before === undefined || after === undefined;
    const stat = lineDiffStat(base, content);
    return {
      path: file.path,
      change: file.base === null ? 'added' : file.content === null ? 'deleted' : 'modified',
      insertions: stat.insertions,
      deletions: stat.deletions,
      binary,
      hunks: binary ? [] : hunksOf(file.path, before, after),
    };
  });
}
