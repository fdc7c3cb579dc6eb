import { reasonSpec } from './catalogue';
import { isDiagnosticId } from './diagnostic-id';
import type { DomainError } from './domain-error';
import { compareUtf8 } from './order';
import type {
  ErrorResult,
  FileIssue,
  FileStat,
  LineRange,
  PathSets,
  SuccessResult,
} from './results';
import type { Scrubber } from './scrubber';

/** Copies the sets into fresh arrays, so a result never aliases the server's configuration. */
function setArrays(sets: PathSets): { readOnly: string[]; writable: string[] } {
  return { readOnly: [...sets.readOnly], writable: [...sets.writable] };
}

function assertCount(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${what} must be a non-negative integer, got ${value}`);
}

const U64_MAX = (1n << 64n) - 1n;

/**
 * A generation as results report it: a number while doubles hold it exactly, else the exact
 * decimal string, so a client never sees a rounded (wrong) generation.
 */
export function reportedGeneration(value: bigint | number): number | string {
  if (typeof value === 'number') {
    assertCount(value, 'generation');
    return value;
  }
  if (value < 0n || value > U64_MAX) throw new RangeError(`generation out of range: ${value}`);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/** What a success result is built from. */
export interface BuildSuccessInit {
  /** The resolved notebook directory the operation ran against. */
  path: string;
  /** The accepted remote generation after the operation (unsigned 64-bit). */
  generation: bigint | number;
  /** The per-file diffstat, in any order. */
  files: FileStat[];
  /** The configured path sets. */
  sets: PathSets;
}

/**
 * The success object in the page's exact field order: files sorted by the UTF-8 bytes of
 * their path, totals computed from them, both set arrays always present.
 */
export function buildSuccess(init: BuildSuccessInit): SuccessResult {
  const generation = reportedGeneration(init.generation);
  const files = init.files
    .map(({ path, insertions, deletions }) => {
      assertCount(insertions, `insertions of ${path}`);
      assertCount(deletions, `deletions of ${path}`);
      return { path, insertions, deletions };
    })
    .sort((a, b) => compareUtf8(a.path, b.path));
  return {
    code: 'OK',
    path: init.path,
    generation,
    filesChanged: files.length,
    insertions: files.reduce((sum, f) => sum + f.insertions, 0),
    deletions: files.reduce((sum, f) => sum + f.deletions, 0),
    files,
    ...setArrays(init.sets),
  };
}

/**
 * Orders ranges by start and merges overlapping ones, so `ranges` is ordered and
 * non-overlapping as the page promises. Adjacent blocks (1-3, 4-6) stay separate: each is
 * its own marker block.
 */
export function normaliseRanges(ranges: readonly LineRange[]): LineRange[] {
  const sorted = ranges
    .map(({ start, end }) => {
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 1 || end < start)
        throw new RangeError(`invalid line range ${start}-${end}`);
      return { start, end };
    })
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: LineRange[] = [];
  for (const range of sorted) {
    const last = merged.at(-1);
    if (last && range.start <= last.end) last.end = Math.max(last.end, range.end);
    else merged.push(range);
  }
  return merged;
}

function normaliseFiles(files: readonly FileIssue[]): FileIssue[] {
  return files
    .map(({ path, reason, ranges }) => ({ path, reason, ranges: normaliseRanges(ranges) }))
    .sort((a, b) => compareUtf8(a.path, b.path) || compareUtf8(a.reason, b.reason));
}

/**
 * The error object in the page's exact field order. The action and retryable verdict come
 * from the catalogue; the message is scrubbed (prose), file paths are not (caller data).
 */
export function buildError(
  err: DomainError,
  ctx: { diagnosticId: string; sets: PathSets; scrubber: Scrubber },
): ErrorResult {
  if (!isDiagnosticId(ctx.diagnosticId))
    throw new RangeError('diagnosticId must be 16 lowercase hex characters');
  const spec = reasonSpec(err.code, err.reason);
  return {
    code: err.code,
    reason: err.reason,
    action: spec.action,
    diagnosticId: ctx.diagnosticId,
    retryable: spec.retryable,
    message: ctx.scrubber.text(err.message),
    ...(err.code === 'ENGINE_FAILED' && err.detail !== undefined ? { detail: err.detail } : {}),
    files: normaliseFiles(err.files),
    ...(err.code === 'RECOVERY_FAILURE' && err.recovery !== undefined
      ? { recovery: { ...err.recovery } }
      : {}),
    ...setArrays(ctx.sets),
  };
}
