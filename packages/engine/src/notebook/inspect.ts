/**
 * Reading the retained history for people (contract §12 `blame`, §13 the view): the notebook
 * at a retained generation, one publication's per-file unified diffs, the history filtered by
 * actor and path, and line attribution (blame). Everything here reads P (fetching the packs it
 * lacks, as `log` does) and answers in generations, paths and text: no object id leaves.
 */
import { DomainError } from '@slivingdoc/envelope';
import { DEFAULT_AUTHOR, diffstat, type TreeEntries } from '@slivingdoc/merge';
import type { Manifest } from '@slivingdoc/store';
import { diffArrays, structuredPatch } from 'diff';
import type { DirContext } from '../context';
import {
  ensureIncrement,
  incrementCommits,
  type PublicationRecord,
  publicationRecord,
  type RetainedCommit,
  type RetainedIncrement,
  retainedCommits,
  retainedIncrements,
  stateBefore,
  treeOf,
} from './history';

/** INVALID_REQUEST · GENERATION_NOT_RETAINED for a read of a generation the history lacks. */
export function generationNotRetained(generation: number, increments: RetainedIncrement[]) {
  const range =
    increments.length === 0
      ? 'the store holds no notebook yet'
      : `generations ${increments.at(-1)?.generation}–${increments[0]?.generation} are retained`;
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'GENERATION_NOT_RETAINED',
    message: `Generation ${generation} is not a publication of the retained history (${range}; see slivingdoc log).`,
  });
}

/** INVALID_REQUEST · FILE_NOT_FOUND: the notebook holds no such file at that generation. */
export function fileNotFound(file: string, generation: number): DomainError {
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'FILE_NOT_FOUND',
    message: `The notebook holds no file ${JSON.stringify(file)} at generation ${generation}.`,
  });
}

/** The retained increment of `generation` (latest when undefined), or a catalogued refusal. */
export function incrementAt(
  manifest: Manifest | undefined,
  generation: number | undefined,
): { increment: RetainedIncrement; increments: RetainedIncrement[] } | undefined {
  const increments = manifest === undefined ? [] : retainedIncrements(manifest);
  if (generation === undefined) {
    const latest = increments[0];
    return latest === undefined ? undefined : { increment: latest, increments };
  }
  const increment = increments.find((i) => i.generation === BigInt(generation));
  if (increment === undefined) throw generationNotRetained(generation, increments);
  return { increment, increments };
}

/** The notebook's files at one retained generation. */
export async function stateAtIncrement(
  ctx: DirContext,
  increment: RetainedIncrement,
): Promise<TreeEntries> {
  await ensureIncrement(ctx, increment);
  return treeOf(ctx, await ctx.db.readCommit(increment.head));
}

/** One line of a unified diff: its kind, text (no line terminator) and numbers on each side. */
export interface DiffLine {
  kind: 'context' | 'added' | 'removed';
  text: string;
  /** Line number before (absent for an added line). */
  oldNumber?: number;
  /** Line number after (absent for a removed line). */
  newNumber?: number;
}

/** One hunk of a unified diff (3 lines of context, as git). */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

/** One file's change in a publication. */
export interface FileDiff {
  path: string;
  change: 'added' | 'deleted' | 'modified';
  insertions: number;
  deletions: number;
  /** True when either side is not UTF-8 text (holds U+0000 or invalid UTF-8): no hunks then. */
  binary: boolean;
  hunks: DiffHunk[];
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text, or `undefined` for binary content. */
export function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Builds the numbered hunks of one text change (jsdiff computes them; we number each line). */
export function hunksOf(path: string, before: string, after: string): DiffHunk[] {
  const patch = structuredPatch(path, path, before, after, undefined, undefined, { context: 3 });
  return patch.hunks.map((hunk) => {
    let oldNumber = hunk.oldStart;
    let newNumber = hunk.newStart;
    const lines: DiffLine[] = [];
    for (const raw of hunk.lines) {
      const mark = raw[0];
      const text = raw.slice(1).replace(/\r$/, '');
      if (mark === '+') lines.push({ kind: 'added', text, newNumber: newNumber++ });
      else if (mark === '-') lines.push({ kind: 'removed', text, oldNumber: oldNumber++ });
      else if (mark === ' ')
        lines.push({ kind: 'context', text, oldNumber: oldNumber++, newNumber: newNumber++ });
      // `\ No newline at end of file` is about the line before; the view does not show it.
    }
    // git numbers an empty side from the line before it (`@@ -0,0 +1,2 @@`); jsdiff from the next.
    return {
      oldStart: hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart,
      oldLines: hunk.oldLines,
      newStart: hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart,
      newLines: hunk.newLines,
      lines,
    };
  });
}

/** Per-file diffs from `before` to `after`, in diffstat order. */
export async function fileDiffs(
  ctx: DirContext,
  before: TreeEntries,
  after: TreeEntries,
): Promise<FileDiff[]> {
  const stats = await diffstat(before, after, ctx.db);
  const empty = new Uint8Array(0);
  const out: FileDiff[] = [];
  for (const stat of stats) {
    const oldOid = before.get(stat.path);
    const newOid = after.get(stat.path);
    const oldText = asText(oldOid === undefined ? empty : await ctx.db.readBlob(oldOid));
    const newText = asText(newOid === undefined ? empty : await ctx.db.readBlob(newOid));
    const binary = oldText === undefined || newText === undefined;
    out.push({
      ...stat,
      change: oldOid === undefined ? 'added' : newOid === undefined ? 'deleted' : 'modified',
      binary,
      hunks: binary ? [] : hunksOf(stat.path, oldText, newText),
    });
  }
  return out;
}

/** Who last changed a line: a retained publication, or a state older than the history. */
export type LineOrigin =
  | { generation: number; time: number; actor: string; message: string }
  | { before: number };

/** One line of a blamed file. */
export interface BlameLine {
  /** 1-based line number in the file at the blamed generation. */
  number: number;
  /** The line without its terminator. */
  text: string;
  origin: LineOrigin;
}

/** Lines keeping no terminator; the comparison ignores one trailing CR, as the diffstat does. */
function splitForBlame(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => line.replace(/\r$/, ''));
}

/**
 * Line attribution of `file` at `upTo` (a retained commit list, oldest first ending at the
 * blamed state): walking forward, each change's added lines take its publication; lines already
 * in the oldest state whose predecessor is gone are `before` the first known change.
 */
export async function blameLines(
  ctx: DirContext,
  commitsOldestFirst: RetainedCommit[],
  file: string,
): Promise<BlameLine[] | undefined> {
  let lines: string[] = [];
  let origins: LineOrigin[] = [];
  let lastOid: string | undefined;
  let present = false;
  for (const [index, retained] of commitsOldestFirst.entries()) {
    const after = await treeOf(ctx, retained.commit);
    const oid = after.get(file);
    // Decided by the retained history alone, so every directory attributes the same way.
    const start =
      index === 0 && retained.pastRetained ? await stateBefore(ctx, retained) : undefined;
    if (index === 0 && start === undefined) {
      // The oldest retained state, whose own changes are unknown: its lines predate the history.
      lastOid = oid;
      present = oid !== undefined;
      const text = oid === undefined ? '' : asText(await ctx.db.readBlob(oid));
      if (text === undefined) return undefined;
      lines = splitForBlame(text);
      const before = Number(commitsOldestFirst[1]?.generation ?? retained.generation + 1n);
      origins = lines.map(() => ({ before }));
      continue;
    }
    if (index === 0) {
      // Known start: the state before the first retained commit (the empty notebook, or a parent).
      const startOid = start?.get(file);
      if (startOid !== undefined) {
        const text = asText(await ctx.db.readBlob(startOid));
        if (text === undefined) return undefined;
        lines = splitForBlame(text);
        origins = lines.map(() => ({ before: Number(retained.generation) }));
      }
      lastOid = startOid;
      present = startOid !== undefined;
    }
    if (oid === lastOid) continue;
    lastOid = oid;
    present = oid !== undefined;
    const text = oid === undefined ? '' : asText(await ctx.db.readBlob(oid));
    if (text === undefined) return undefined;
    const next = splitForBlame(text);
    const origin: LineOrigin = {
      generation: Number(retained.generation),
      time: retained.commit.time,
      actor: retained.commit.author ?? DEFAULT_AUTHOR,
      message: Buffer.from(retained.commit.message).toString('utf8'),
    };
    const nextOrigins: LineOrigin[] = [];
    let at = 0;
    for (const change of diffArrays(lines, next)) {
      const count = change.count ?? change.value.length;
      if (change.removed) at += count;
      else if (change.added) for (let i = 0; i < count; i++) nextOrigins.push(origin);
      else {
        for (let i = 0; i < count; i++) nextOrigins.push(origins[at + i] as LineOrigin);
        at += count;
      }
    }
    lines = next;
    origins = nextOrigins;
  }
  if (!present) return undefined;
  return lines.map((text, i) => ({ number: i + 1, text, origin: origins[i] as LineOrigin }));
}

/** Options of {@link filteredHistory}. */
export interface HistoryFilter {
  /** Publications to skip (paging), after filtering. */
  offset: number;
  limit: number;
  /** Only publications by this actor. */
  actor?: string | undefined;
  /** Only publications that changed this file, or a file below this folder. */
  file?: string | undefined;
}

/** Whether a path is `file` itself or lies below it as a folder. */
function underPath(path: string, file: string): boolean {
  return path === file || path.startsWith(file.endsWith('/') ? file : `${file}/`);
}

/** Whether the commit changed anything at or below `file` (a boundary: whether it holds any). */
async function touches(ctx: DirContext, retained: RetainedCommit, file: string): Promise<boolean> {
  const after = await treeOf(ctx, retained.commit);
  const before = await stateBefore(ctx, retained);
  if (before === undefined) return [...after.keys()].some((path) => underPath(path, file));
  for (const [path, oid] of after)
    if (underPath(path, file) && before.get(path) !== oid) return true;
  for (const path of before.keys()) if (underPath(path, file) && !after.has(path)) return true;
  return false;
}

/**
 * One page of the retained history, newest first, with each publication's diffstat; `more`
 * tells whether older matching publications follow.
 */
export async function filteredHistory(
  ctx: DirContext,
  manifest: Manifest,
  filter: HistoryFilter,
): Promise<{ publications: PublicationRecord[]; more: boolean }> {
  const page: RetainedCommit[] = [];
  let skipped = 0;
  let more = false;
  for await (const retained of retainedCommits(ctx, manifest)) {
    if (filter.actor !== undefined && (retained.commit.author ?? DEFAULT_AUTHOR) !== filter.actor)
      continue;
    if (filter.file !== undefined && !(await touches(ctx, retained, filter.file))) continue;
    if (skipped < filter.offset) {
      skipped += 1;
      continue;
    }
    if (page.length === filter.limit) {
      more = true;
      break;
    }
    page.push(retained);
  }
  const publications: PublicationRecord[] = [];
  for (const retained of page) publications.push(await publicationRecord(ctx, retained, true));
  return { publications, more };
}

/** One member commit of a publication, with its own per-file diff. */
export interface PublicationMember {
  time: number;
  actor: string;
  message: string;
  /** `undefined` when the state before it is no longer retained (a checkpoint boundary). */
  files: FileDiff[] | undefined;
}

/** One publication in full: its members oldest first (one unless a group commit). */
export interface PublicationDetail {
  generation: number;
  members: PublicationMember[];
  /** Whether `revert` can undo it (the state before it is retained). */
  revertible: boolean;
}

/** Publication `generation` with every member's unified diff. */
export async function publicationDetail(
  ctx: DirContext,
  manifest: Manifest | undefined,
  generation: number,
): Promise<PublicationDetail> {
  const found = incrementAt(manifest, generation);
  if (found === undefined) throw generationNotRetained(generation, []);
  const { increment, increments } = found;
  const older = increments[increments.indexOf(increment) + 1];
  const commits = (await incrementCommits(ctx, increment, older)).reverse();
  const members: PublicationMember[] = [];
  for (const retained of commits) {
    const before = await stateBefore(ctx, retained);
    const record = await publicationRecord(ctx, retained, false);
    members.push({
      time: record.time,
      actor: record.actor,
      message: record.message,
      files:
        before === undefined
          ? undefined
          : await fileDiffs(ctx, before, await treeOf(ctx, retained.commit)),
    });
  }
  return { generation, members, revertible: increment.parent !== undefined };
}

/** Every retained commit up to `generation` (all when undefined), oldest first. */
export async function commitsUpTo(
  ctx: DirContext,
  manifest: Manifest,
  generation: number | undefined,
): Promise<RetainedCommit[]> {
  const all: RetainedCommit[] = [];
  for await (const retained of retainedCommits(ctx, manifest)) {
    if (generation === undefined || retained.generation <= BigInt(generation)) all.push(retained);
  }
  return all.reverse();
}
