/**
 * The read operations for people (`log`, `history`, `publication`, `files`, `readFile`,
 * `blame`): what each answers from the retained history, once the service has checked the
 * request, locked the directory and read `current` (docs/engine.md, "status, log and revert").
 */
import { compareUtf8 } from '@slivingdoc/envelope';
import type { Manifest } from '@slivingdoc/store';
import type {
  BlameResult,
  FileRequest,
  HistoryPage,
  HistoryRequest,
  HistoryResult,
  LogRequest,
  NotebookFile,
  NotebookFiles,
  PublicationResult,
} from '../api';
import type { DirContext } from '../context';
import { readHistory, withRetainedObjects } from './history';
import {
  asText,
  blameLines,
  commitsUpTo,
  fileNotFound,
  filteredHistory,
  incrementAt,
  publicationDetail,
  stateAtIncrement,
} from './inspect';
import type { Current } from './remote';

/** `log`: the newest retained publications, newest first. */
export async function logOf(
  ctx: DirContext,
  current: Current | undefined,
  request: LogRequest,
): Promise<HistoryResult> {
  const publications =
    current === undefined
      ? []
      : await withRetainedObjects(ctx, current.manifest, () =>
          readHistory(ctx, current.manifest, {
            limit: request.limit,
            stat: request.stat ?? false,
          }),
        );
  return {
    path: ctx.dir,
    generation: Number(current?.manifest.generation ?? 0n),
    publications,
  };
}

/** `history`: one page of the retained publications, filtered, and the checkpoints' bounds. */
export async function historyPageOf(
  ctx: DirContext,
  current: Current | undefined,
  request: HistoryRequest & { offset: number },
): Promise<HistoryPage> {
  const manifest = current?.manifest;
  const page =
    manifest === undefined
      ? { publications: [], more: false }
      : await filteredHistory(ctx, manifest, {
          offset: request.offset,
          limit: request.limit,
          actor: request.actor,
          file: request.file,
        });
  const checkpoints =
    manifest === undefined
      ? []
      : [manifest, ...manifest.retained].map((chain) => Number(chain.checkpoint.throughGeneration));
  return {
    path: ctx.dir,
    generation: Number(manifest?.generation ?? 0n),
    ...page,
    checkpoints,
  };
}

/** `publication`: one publication's detail. */
export async function publicationOf(
  ctx: DirContext,
  current: Current | undefined,
  generation: number,
): Promise<PublicationResult> {
  return {
    ...(await publicationDetail(ctx, current?.manifest, generation)),
    storeGeneration: Number(current?.manifest.generation ?? 0n),
  };
}

/** `files`: the paths of the notebook at a generation (the newest when absent). */
export async function filesAt(
  ctx: DirContext,
  current: Current | undefined,
  generation: number | undefined,
): Promise<NotebookFiles> {
  const found = incrementAt(current?.manifest, generation);
  if (found === undefined) return { generation: 0, files: [] };
  const entries = await stateAtIncrement(ctx, found.increment);
  return {
    generation: Number(found.increment.generation),
    files: [...entries.keys()].sort(compareUtf8),
  };
}

/** One file's content at a generation (the newest when absent); FILE_NOT_FOUND otherwise. */
export async function fileAt(
  ctx: DirContext,
  manifest: Manifest | undefined,
  request: FileRequest,
): Promise<Omit<NotebookFile, 'file'>> {
  const found = incrementAt(manifest, request.generation);
  const generation = Number(found?.increment.generation ?? 0n);
  const oid =
    found === undefined
      ? undefined
      : (await stateAtIncrement(ctx, found.increment)).get(request.file);
  if (oid === undefined) throw fileNotFound(request.file, generation);
  return { generation, content: await ctx.db.readBlob(oid) };
}

/** `blame`: which publication wrote each line of a text file at a generation. */
export async function blameOf(
  ctx: DirContext,
  current: Current | undefined,
  request: FileRequest,
): Promise<BlameResult> {
  const { generation, content } = await fileAt(ctx, current?.manifest, request);
  if (asText(content) === undefined || current === undefined)
    throw fileNotFound(request.file, generation);
  const commits = await commitsUpTo(ctx, current.manifest, generation);
  const lines = await blameLines(ctx, commits, request.file);
  if (lines === undefined) throw fileNotFound(request.file, generation);
  return { path: ctx.dir, generation, file: request.file, lines };
}
