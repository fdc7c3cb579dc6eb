import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** What the engine reports about the directories it manages (`NotebookService.localChanges`). */
export interface LocalChanges {
  managed: string[];
  unpublished: string[];
}

/**
 * True when the session's notebook directory holds something that would be lost with it:
 * a managed directory with unpublished edits, or any file (or link, or other entry) outside
 * every managed directory — notes written there but never pulled or committed. Empty
 * directories hold nothing.
 */
export async function holdsUnpublished(
  notebookDir: string,
  changes: LocalChanges,
): Promise<boolean> {
  if (changes.unpublished.length > 0) return true;
  const managed = new Set(changes.managed);
  const walk = async (dir: string): Promise<boolean> => {
    if (managed.has(dir)) return false;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) return true;
      if (await walk(join(dir, entry.name))) return true;
    }
    return false;
  };
  // Anything unreadable counts as held: deleting what we could not inspect loses data.
  return walk(notebookDir).catch(() => true);
}

/** The logger shape the decision is reported through (pino's). */
interface SessionLog {
  info(record: object, msg: string): void;
  warn(record: object, msg: string): void;
}

/**
 * The end of a session directory (docs/hosts.md, "Session directories"): removed with its
 * private state when it holds nothing unpublished, else kept and its path logged at warn so
 * the edits can be recovered (`slivingdoc commit <dir>/notebook -m …` publishes them).
 */
export async function settleSessionDir(
  session: string,
  keep: boolean,
  log: SessionLog | undefined,
): Promise<void> {
  if (keep) {
    log?.warn(
      { sessionDir: session, notebookDir: join(session, 'notebook') },
      'session directory kept: it holds unpublished edits',
    );
    return;
  }
  try {
    await rm(session, { recursive: true, force: true });
    log?.info({ sessionDir: session }, 'session directory removed');
  } catch (err) {
    log?.warn({ sessionDir: session, err }, 'could not remove the session directory');
  }
}
