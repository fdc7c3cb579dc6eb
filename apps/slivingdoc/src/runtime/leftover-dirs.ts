import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { holdsUnpublished, type LocalChanges } from './session-dir';

/** The directory name an earlier release gave a second live session of a token (`alice+2`). */
const SESSION_COPY = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}\+[0-9]+$/;

/**
 * The `NAME+N` directories directly below `base` that hold unpublished edits (a directory
 * that cannot be inspected counts as holding some). Reads only; deletes nothing.
 */
export async function leftoverSessionDirs(
  base: string,
  service: { localChanges(under?: string): Promise<LocalChanges> },
): Promise<string[]> {
  const entries = await readdir(base, { withFileTypes: true }).catch(() => []);
  const held: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !SESSION_COPY.test(entry.name)) continue;
    const dir = join(base, entry.name);
    const changes = await service.localChanges(dir).catch(() => undefined);
    if (changes === undefined || (await holdsUnpublished(dir, changes))) held.push(dir);
  }
  return held.sort();
}
