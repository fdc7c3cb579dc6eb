import { mkdir } from 'node:fs/promises';
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
