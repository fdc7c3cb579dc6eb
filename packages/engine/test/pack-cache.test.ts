import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PACK_CACHE_KEPT, trimPackCache } from '../src/notebook/remote';

let dir: string;
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("P's pack cache", () => {
  it('keeps the most recently used packs and drops temp files of a killed download', async () => {
    dir = await mkdtemp(join(tmpdir(), 'pack-cache-'));
    const total = PACK_CACHE_KEPT + 3;
    for (let i = 0; i < total; i += 1) {
      const path = join(dir, `${i}.pack`);
      await writeFile(path, 'x');
      // Pack i was last used at second i.
      await utimes(path, i, i);
    }
    await writeFile(join(dir, '9.pack.abc.tmp'), 'torn');
    await trimPackCache(dir);
    const kept = (await readdir(dir)).sort();
    expect(kept).toEqual(
      Array.from({ length: PACK_CACHE_KEPT }, (_, i) => `${total - PACK_CACHE_KEPT + i}.pack`),
    );
  });
});
