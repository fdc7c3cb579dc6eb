import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createNotebookService, type EngineConfig, type NotebookService } from '../src/index';

/**
 * Opens participants under `base`, each with its own workspace root, private root and
 * notebook directory `<root>/ws/notebook`, all on the given store.
 */
export function participants(base: string) {
  let n = 0;
  return async function open(
    store: EngineConfig['store'],
    extra: Partial<EngineConfig> = {},
  ): Promise<{ service: NotebookService; dir: string }> {
    n += 1;
    const root = join(base, `p${n}`);
    const dir = join(root, 'ws', 'notebook');
    await mkdir(join(root, 'ws'), { recursive: true });
    const service = await createNotebookService({
      store,
      privateRoot: join(root, 'priv'),
      workspaceRoot: join(root, 'ws'),
      notebookDir: dir,
      ...extra,
    });
    return { service, dir };
  };
}

/** Pulls, then publishes `files` small files in directories of 100 with one commit. */
export async function seedNotebook(
  writer: { service: NotebookService; dir: string },
  files: number,
): Promise<void> {
  await writer.service.pull({});
  for (let i = 0; i < files; i += 1) {
    const dir = join(writer.dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `f${i}.md`), `file ${i}\nline two\n`);
  }
  await writer.service.commit({ message: 'bulk' });
}
