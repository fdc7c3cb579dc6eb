/**
 * What approving a proposal would change at the accepted head (the view's Proposals page): the
 * merge approve runs (docs/review.md: base = R with the proposal's base bytes, one side = R with
 * its proposed bytes, the other = R), done in memory. It writes and publishes nothing.
 */
import type { FileIssue } from '@slivingdoc/envelope';
import {
  blobOid,
  type MergeAdditions,
  merge3,
  type ObjectDb,
  type TreeEntries,
} from '@slivingdoc/merge';
import { foldKey } from '@slivingdoc/policy';
import type { FileDiff } from '../notebook/inspect';
import { bytesDiff } from './diff';
import type { ProposalRecord } from './record';

/** The accepted head as the preview reads it: its paths, and the bytes of one of them. */
export interface HeadFiles {
  paths: readonly string[];
  read(path: string): Promise<Uint8Array>;
}

/** The outcome an approval would have now. */
export interface ApprovalPreview {
  /** What the publication would change at the head, per file (none: it would publish nothing). */
  files: FileDiff[];
  /** Files the merge would conflict on, with their line ranges: approving publishes nothing. */
  conflicts: FileIssue[];
}

/** Previews `record`'s approval over `head`, with the notebook's rule for concurrent additions. */
export async function previewApproval(
  record: ProposalRecord,
  head: HeadFiles,
  additions: MergeAdditions = 'keep',
): Promise<ApprovalPreview> {
  const blobs = new Map<string, Uint8Array>();
  const put = (bytes: Uint8Array) => {
    const oid = blobOid(bytes);
    blobs.set(oid, bytes);
    return oid;
  };
  const touched = new Set(record.files.map((file) => file.path));
  const remote: TreeEntries = new Map();
  for (const path of head.paths) {
    // Paths the proposal leaves alone are equal on all three sides: never read, only named.
    remote.set(path, touched.has(path) ? put(await head.read(path)) : `unread:${path}`);
  }
  const side = (which: 'base' | 'content'): TreeEntries => {
    const entries = new Map(remote);
    for (const file of record.files) {
      const bytes = file[which];
      if (bytes === null) entries.delete(file.path);
      else entries.set(file.path, put(bytes));
    }
    return entries;
  };
  // merge3 reads and writes only blobs; the in-memory map stands in for the object database.
  const db = {
    readBlob: async (oid: string) => blobs.get(oid) as Uint8Array,
    writeBlob: async (bytes: Uint8Array) => put(bytes),
  } as unknown as ObjectDb;
  const merged = await merge3({
    base: side('base'),
    local: side('content'),
    remote,
    db,
    foldKey,
    additions,
  });
  const bytesOf = (oid: string | undefined) =>
    oid === undefined ? null : (blobs.get(oid) ?? null);
  const changed = new Set([...merged.result.keys(), ...remote.keys()]);
  const files = [...changed]
    .filter((path) => merged.result.get(path) !== remote.get(path))
    .sort()
    .map((path) => bytesDiff(path, bytesOf(remote.get(path)), bytesOf(merged.result.get(path))));
  const conflicts = merged.conflicts.map((c) => ({
    path: c.path,
    reason: c.reason,
    ranges: c.ranges.map((r) => ({ start: r.start, end: r.end })),
  }));
  return { files, conflicts };
}
