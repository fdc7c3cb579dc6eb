import { mkdir, mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCli } from '../reliability/cli';

// contract §4: P directories are created 0700, P files 0600, through a real process.

beforeAll(() => requireBuiltCli());

describe('private state P', () => {
  it('every directory of P is 0700 and every file 0600', async () => {
    const root = await mkdtemp(join(tmpdir(), 'slivingdoc-modes-'));
    const env = {
      HOME: join(root, 'home'),
      SLIVINGDOC_STORE_DIR: join(root, 'store'),
      SLIVINGDOC_PRIVATE_ROOT: join(root, 'private'),
    };
    const dir = join(root, 'nb');
    await mkdir(dir);
    expect((await runCli(['pull', dir], env)).code).toBe(0);
    await writeFile(join(dir, 'n.md'), 'x\n');
    expect((await runCli(['commit', dir, '-m', 'one'], env)).code).toBe(0);
    const wrong: string[] = [];
    for (const e of await readdir(env.SLIVINGDOC_PRIVATE_ROOT, {
      recursive: true,
      withFileTypes: true,
    })) {
      const full = join(e.parentPath, e.name);
      const mode = (await stat(full)).mode & 0o777;
      if (mode !== (e.isDirectory() ? 0o700 : 0o600))
        wrong.push(`${full.slice(env.SLIVINGDOC_PRIVATE_ROOT.length)} ${mode.toString(8)}`);
    }
    expect((await stat(env.SLIVINGDOC_PRIVATE_ROOT)).mode & 0o077).toBe(0);
    expect(wrong).toEqual([]);
  }, 60_000);
});
