import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRegistry } from '../src/index';
import { tempDir } from './helpers';

let root: { path: string; cleanup: () => Promise<void> };

beforeEach(async () => {
  root = await tempDir('ws-registry-');
});

afterEach(async () => {
  await root.cleanup();
});

describe('openRegistry', () => {
  it('is empty before any add', async () => {
    expect(await openRegistry(join(root.path, 'private')).list()).toEqual([]);
  });

  it('keeps every directory of concurrent adds, once each', async () => {
    const dirs = Array.from({ length: 20 }, (_, i) => join(root.path, `nb${i}`));
    await Promise.all(dirs.map((dir) => mkdir(dir)));
    await Promise.all(
      [...dirs, ...dirs].map((dir) => openRegistry(join(root.path, 'private')).add(dir)),
    );
    expect(await openRegistry(join(root.path, 'private')).list()).toEqual([...dirs].sort());
  });

  it('prunes entries whose directory no longer exists', async () => {
    const registry = openRegistry(join(root.path, 'private'));
    await mkdir(join(root.path, 'a'));
    await mkdir(join(root.path, 'b'));
    await registry.add(join(root.path, 'a'));
    await registry.add(join(root.path, 'b'));
    await rm(join(root.path, 'a'), { recursive: true });
    expect(await registry.list()).toEqual([join(root.path, 'b')]);
    await mkdir(join(root.path, 'a'));
    expect(await registry.list()).toEqual([join(root.path, 'b')]);
  });

  it('lets calls arriving during a listing share the next one; each sees every add before it', async () => {
    const registry = openRegistry(join(root.path, 'private'));
    // Another process's view of the same registry.
    const other = openRegistry(join(root.path, 'private'));
    const [a, b] = [join(root.path, 'a'), join(root.path, 'b')];
    await mkdir(a);
    await mkdir(b);
    await registry.add(a);
    const first = registry.list();
    await other.add(b);
    const later = [registry.list(), registry.list(), registry.list()];
    expect(await first).toContain(a);
    const listed = await Promise.all(later);
    for (const dirs of listed) expect(dirs).toEqual([a, b]);
    // Each caller has its own copy.
    (listed[0] as string[]).pop();
    expect(listed[1]).toEqual([a, b]);
  });
});
