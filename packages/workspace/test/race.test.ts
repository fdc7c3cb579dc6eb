import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  ChangeMonitor,
  ConcurrentEditError,
  emptyStatCache,
  loadStatCache,
  scanNotebook,
  writeChanges,
} from '../src/index';
import { tempDir, writeTree } from './helpers';

const racerScript = fileURLToPath(new URL('./fixtures/swap-racer.mjs', import.meta.url));
const ROUNDS = 300;
/**
 * How often the racer lands inside an operation depends on how the two processes share the
 * cores, so a test that must see the race happen runs past ROUNDS until it did, up to this.
 */
const MAX_ROUNDS = 10 * ROUNDS;
let base: { path: string; cleanup: () => Promise<void> };
let L: string;
let outside: string;
let racer: ChildProcess | undefined;

beforeEach(async () => {
  base = await tempDir('ws-race-');
  L = join(base.path, 'L');
  outside = join(base.path, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.md'), 'SECRET');
  await writeTree(L, { 'd/f.md': 'inside', 'top.md': 'top' });
});

afterEach(async () => {
  if (racer && racer.exitCode === null) {
    racer.kill('SIGKILL');
    await once(racer, 'exit');
  }
  await base.cleanup();
});

async function startRacer(): Promise<void> {
  racer = spawn(process.execPath, [racerScript, L, outside], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(racer.stdout!, 'data');
}

/** Runs `op`; a ConcurrentEditError is an accepted outcome, anything else fails the test. */
async function tolerateConcurrentEdit(op: () => Promise<unknown>): Promise<'ok' | 'conflict'> {
  try {
    await op();
    return 'ok';
  } catch (error) {
    if (error instanceof ConcurrentEditError) return 'conflict';
    throw error;
  }
}

async function expectOutsideUntouched() {
  expect(await readdir(outside)).toEqual(['secret.md']);
  expect(await readFile(join(outside, 'secret.md'), 'utf8')).toBe('SECRET');
}

describe('a symlink swapped in for a directory of L during an operation', () => {
  it(`never lets a write, replace or delete escape L (${ROUNDS} rounds)`, async () => {
    const { files } = await scanNotebook(L, { cache: emptyStatCache() });
    const stamp = files.get('d/f.md')!.stamp;
    await startRacer();
    const outcomes = { ok: 0, conflict: 0 };
    const raced = () => outcomes.conflict > 0 && outcomes.ok > 0;
    for (let round = 0; round < ROUNDS || (round < MAX_ROUNDS && !raced()); round += 1) {
      const changes = [
        { path: `d/new-${round}.md`, content: Buffer.from('x'), expect: 'absent' as const },
        { path: `d/sub/deep-${round}.md`, content: Buffer.from('y'), expect: 'absent' as const },
      ];
      outcomes[await tolerateConcurrentEdit(() => writeChanges(L, changes))] += 1;
      // A replacement and a deletion aimed at the same name that exists outside as well.
      const secret = { path: 'd/secret.md', content: Buffer.from('OWNED'), expect: stamp };
      outcomes[await tolerateConcurrentEdit(() => writeChanges(L, [secret]))] += 1;
      const remove = { path: 'd/secret.md', content: null, expect: stamp };
      outcomes[await tolerateConcurrentEdit(() => writeChanges(L, [remove]))] += 1;
    }
    await expectOutsideUntouched();
    // The race really happened: both outcomes occurred.
    expect(outcomes.conflict).toBeGreaterThan(0);
    expect(outcomes.ok).toBeGreaterThan(0);
  }, 300_000);

  it(`never lets a scan or a cached read see outside L (${ROUNDS} rounds)`, async () => {
    const cacheFile = join(base.path, 'cache.json');
    const cache = await loadStatCache(cacheFile);
    await startRacer();
    let scans = 0;
    for (let round = 0; round < ROUNDS || (round < MAX_ROUNDS && scans === 0); round += 1) {
      await tolerateConcurrentEdit(async () => {
        const result = await scanNotebook(L, { cache });
        scans += 1;
        for (const file of result.files.values()) {
          expect(file.path).not.toBe('d/secret.md');
          expect(file.path.startsWith('d.real/secret')).toBe(false);
          const content = await tolerateRead(() => file.read());
          expect(content).not.toBe('SECRET');
          if (file.cachedId === undefined) cache.set(file.path, file.stamp, file.path);
        }
        for (const problem of result.problems) expect(problem.path).not.toContain('secret');
      });
      if (round % 50 === 0) await cache.save();
    }
    expect(scans).toBeGreaterThan(0);
    await expectOutsideUntouched();
  }, 300_000);

  it.each([
    ['', false],
    [' with a change monitor', true],
  ])(
    `never lets the path-based stat of a warm scan%s make an outside file L's (${ROUNDS} rounds)`,
    async (_, monitored) => {
      // The same name outside: through a swapped L/d, `<L>/d/f.md` names the outside file. Many
      // files in d keep each scan inside d long enough for the racer to swap it meanwhile.
      await writeFile(join(outside, 'f.md'), 'SECRET');
      await writeTree(
        L,
        Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`d/filler-${i}.md`, `${i}`])),
      );
      const insideInodes = new Set(
        await Promise.all(
          (await readdir(join(L, 'd'))).map(async (name) => (await lstat(join(L, 'd', name))).ino),
        ),
      );
      const cache = await loadStatCache(join(base.path, 'cache.json'));
      // Armed by the cold scan: later scans reuse what it found in directories without events.
      const monitor = monitored ? new ChangeMonitor(L) : undefined;
      onTestFinished(() => monitor?.close());
      const cold = await scanNotebook(L, { cache, monitor });
      for (const file of cold.files.values())
        cache.set(file.path, file.stamp, `id-of-${file.path}`);
      await cache.save();
      await startRacer();
      let hits = 0;
      for (let round = 0; round < ROUNDS || (round < MAX_ROUNDS && hits === 0); round += 1) {
        await tolerateConcurrentEdit(async () => {
          const { files } = await scanNotebook(L, { cache, monitor });
          for (const file of files.values()) {
            if (!file.path.startsWith('d/')) continue;
            expect(insideInodes.has(file.stamp.ino)).toBe(true);
            if (file.cachedId !== undefined) hits += 1;
            expect(file.cachedId ?? `id-of-${file.path}`).toBe(`id-of-${file.path}`);
          }
          const f = files.get('d/f.md');
          if (f) expect(await tolerateRead(() => f.read())).not.toBe('SECRET');
        });
      }
      expect(hits).toBeGreaterThan(0);
      expect(await readFile(join(outside, 'f.md'), 'utf8')).toBe('SECRET');
    },
    300_000,
  );
});

async function tolerateRead(read: () => Promise<Uint8Array>): Promise<string | undefined> {
  try {
    return Buffer.from(await read()).toString('utf8');
  } catch (error) {
    if (error instanceof ConcurrentEditError) return undefined;
    throw error;
  }
}
