import { compareUtf8, type PathSets } from '@slivingdoc/envelope';
import { PathSetError } from './errors';
import { checkNotebookPath } from './notebook-path';

/**
 * The configured writable/read-only sets (contract §5). Every text that advertises them (contract §2)
 * is built from `sets` by `@slivingdoc/envelope` (the lowest layer, which also renders
 * results), so the four surfaces cannot disagree.
 */
export interface PathPolicy {
  /** The normalised, deduplicated, UTF-8-byte-sorted sets. */
  readonly sets: PathSets;
  /** Whether `notes_commit` may change `path` (a notebook path). */
  isWritable(path: string): boolean;
}

/**
 * Validates and normalises the sets (contract §5): NFC, no `.` segments or `./`, no trailing or
 * repeated `/`, the path rules of contract §4, deduplicated, sorted by UTF-8 bytes. Throws
 * {@link PathSetError} for an invalid entry or an entry in both sets (a startup error).
 */
export function createPathPolicy(init: { writable: string[]; readOnly: string[] }): PathPolicy {
  const writable = normaliseSet(init.writable);
  const readOnly = normaliseSet(init.readOnly);
  const both = writable.find((entry) => readOnly.includes(entry));
  if (both !== undefined) {
    throw new PathSetError(both, `"${both}" is in both the writable and the read-only set.`);
  }
  const sets: PathSets = { readOnly, writable };
  return { sets, isWritable: (path) => isWritable(sets, path.normalize('NFC')) };
}

function normaliseSet(entries: string[]): string[] {
  const normalised = entries.map(normaliseEntry);
  return [...new Set(normalised)].sort(compareUtf8);
}

function normaliseEntry(raw: string): string {
  const segments = raw
    .normalize('NFC')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.');
  const entry = segments.join('/');
  if (entry === '' || raw.startsWith('/')) {
    throw new PathSetError(raw, `"${raw}" is not a notebook-relative path.`);
  }
  const reason = checkNotebookPath(entry);
  if (reason) throw new PathSetError(raw, `"${raw}" breaks the notebook path rules (${reason}).`);
  return entry;
}

/** The length of `entry` when it equals `path` or is a segment-wise prefix of it, else -1. */
function matchLength(entry: string, path: string): number {
  return path === entry || path.startsWith(`${entry}/`) ? entry.length : -1;
}

function longestMatch(entries: string[], path: string): number {
  return Math.max(-1, ...entries.map((entry) => matchLength(entry, path)));
}

function isWritable(sets: PathSets, path: string): boolean {
  const writable = longestMatch(sets.writable, path);
  const readOnly = longestMatch(sets.readOnly, path);
  if (sets.writable.length === 0) return readOnly < 0;
  if (sets.readOnly.length === 0) return writable >= 0;
  // Both configured: the longest matching entry decides; matching neither is read-only.
  // Entries never appear in both sets, so two matches never have the same length.
  return writable > readOnly;
}
