import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ChangeMonitor,
  ConcurrentEditError,
  emptyStatCache,
  loadStatCache,
  type ScanResult,
  type StatCache,
  scanNotebook,
  writeChanges,
} from '../src/index';
import { tempDir, writeTree } from './helpers';

let base: { path: string; cleanup: () => Promise<void> };
let L: string;
let outside: string;
let cache: StatCache;
let monitor: ChangeMonitor;

beforeEach(async () => {
  base = await tempDir('ws-monitor-');
  L = join(base.path, 'L');
  outside = join(base.path, 'outside');
  mkdirSync(outside);
  await writeTree(L, {
    'a.md': 'alpha',
    'b.md': 'bravo',
    'd/c.md': 'charlie',
    'd/e/f.md': 'foxtrot',
    'g/h.md': 'hotel',
  });
  writeFileSync(join(outside, 'shared.md'), 'shared');
  linkSync(join(outside, 'shared.md'), join(L, 'd/linked.md'));
  cache = await loadStatCache(join(base.path, 'cache.json'));
  monitor = new ChangeMonitor(L);
});

afterEach(async () => {
  monitor.close();
  await base.cleanup();
});

/** Path → stamp and content, and the problems: what a scan says about L. */
async function view(result: ScanResult) {
  const files: Record<string, unknown> = {};
  for (const file of result.files.values()) {
    files[file.path] = { stamp: file.stamp, content: Buffer.from(await file.read()).toString() };
  }
  return { files, problems: result.problems };
}

/** A monitored scan that records ids like the engine does, so the next one has cache hits. */
async function monitoredScan(): Promise<ScanResult> {
  const result = await scanNotebook(L, { cache, monitor });
  for (const file of result.files.values()) {
    if (file.cachedId !== undefined) continue;
    const id = createHash('sha1')
      .update(await file.read())
      .digest('hex');
    cache.set(file.path, file.stamp, id);
  }
  await cache.save();
  return result;
}

/** Expects a monitored warm scan, right after a change, to equal a full scan. */
async function expectSameAsFullScan() {
  const warm = await view(await monitoredScan());
  const full = await view(await scanNotebook(L, { cache: emptyStatCache() }));
  expect(warm).toEqual(full);
}

/** Arms the monitor and makes every file a trusted cache hit (not racily clean). */
async function settle() {
  await sleep(20);
  await monitoredScan();
  await monitoredScan();
  expect(monitor.trusted).toBe(true);
}

const at = (path: string) => join(L, path);

const changes: Record<string, () => void> = {
  'an in-place write of the same size': () => writeFileSync(at('d/c.md'), 'CHARLIE'),
  'an append': () => appendFileSync(at('a.md'), ' more'),
  'a truncation': () => truncateSync(at('d/e/f.md'), 3),
  'a touch': () => utimesSync(at('b.md'), new Date(2001, 1, 1), new Date(2001, 1, 1)),
  'a chmod': () => chmodSync(at('g/h.md'), 0o600),
  'a new file': () => writeFileSync(at('d/e/new.md'), 'new'),
  'a deleted file': () => rmSync(at('d/c.md')),
  'a rename within a directory': () => renameSync(at('g/h.md'), at('g/i.md')),
  'a rename across directories': () => renameSync(at('d/e/f.md'), at('g/f.md')),
  'a new nested directory with files': () => {
    mkdirSync(at('n/m'), { recursive: true });
    writeFileSync(at('n/m/x.md'), 'x');
    writeFileSync(at('n/y.md'), 'y');
  },
  'a removed directory': () => rmSync(at('d'), { recursive: true }),
  'a directory replaced by a file': () => {
    rmSync(at('g'), { recursive: true });
    writeFileSync(at('g'), 'now a file');
  },
  'a file replaced by a directory': () => {
    rmSync(at('b.md'));
    mkdirSync(at('b.md'));
    writeFileSync(at('b.md/inner.md'), 'inner');
  },
  'a directory replaced by another one': () => {
    renameSync(at('d'), join(outside, 'old-d'));
    mkdirSync(at('d'));
    writeFileSync(at('d/c.md'), 'another charlie');
  },
  'a symlink appearing': () => symlinkSync(outside, at('d/e/link')),
  'a FIFO appearing': () => execFileSync('mkfifo', [at('g/fifo')]),
  'a hard-linked file modified through its outside name': () =>
    writeFileSync(join(outside, 'shared.md'), 'SHARED'),
};

describe('a monitored warm scan sees, right after it happens,', () => {
  for (const [name, change] of Object.entries(changes)) {
    it(name, async () => {
      await settle();
      change();
      await expectSameAsFullScan();
      // And the scan after that, with the monitor re-armed where it changed.
      await expectSameAsFullScan();
    });
  }
});

describe('the change monitor', () => {
  it('reuses a directory that raised no event (a change invisible to inotify stays unseen until one)', async () => {
    await settle();
    // Linked from outside after the scan, the file still counts one link here, and neither
    // the link nor a write through the outside name raises an event in L/g (residual risk).
    linkSync(at('g/h.md'), join(outside, 'h-link.md'));
    writeFileSync(join(outside, 'h-link.md'), 'HOTEL');
    const warm = await monitoredScan();
    expect(warm.files.get('g/h.md')?.stamp.size).toBe('hotel'.length);
    writeFileSync(at('g/other.md'), 'other');
    await expectSameAsFullScan();
  });

  it('hands out a reused stamp that writeChanges still refuses once the file moved on', async () => {
    await settle();
    linkSync(at('g/h.md'), join(outside, 'h-link.md'));
    writeFileSync(join(outside, 'h-link.md'), 'HOTEL, unseen by inotify');
    const stale = (await monitoredScan()).files.get('g/h.md');
    expect(stale?.stamp.size).toBe('hotel'.length);
    const write = { path: 'g/h.md', content: Buffer.from('ours'), expect: stale!.stamp };
    await expect(writeChanges(L, [write])).rejects.toBeInstanceOf(ConcurrentEditError);
    await expect(stale!.read()).rejects.toBeInstanceOf(ConcurrentEditError);
    expect(readFileSync(at('g/h.md'), 'utf8')).toBe('HOTEL, unseen by inotify');
  });

  it('falls back to a full scan when it is marked untrusted', async () => {
    await settle();
    linkSync(at('g/h.md'), join(outside, 'h-link.md'));
    writeFileSync(join(outside, 'h-link.md'), 'HOTEL, unseen by inotify');
    monitor.markUntrusted();
    await expectSameAsFullScan();
    expect(monitor.trusted).toBe(true);
  });

  it('assumes a lost event after a burst of half the inotify queue, and scans in full', async () => {
    await settle();
    // Alternating files: inotify merges identical consecutive events only.
    for (let i = 0; i < 9000; i += 1)
      chmodSync(at(i % 2 ? 'a.md' : 'b.md'), i % 4 < 2 ? 0o644 : 0o600);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(monitor.trusted).toBe(false);
    await expectSameAsFullScan();
    expect(monitor.trusted).toBe(true);
  });

  it('gives up above its directory limit and scans in full', async () => {
    monitor.close();
    monitor = new ChangeMonitor(L, { maxDirectories: 2 });
    await monitoredScan();
    expect(monitor.trusted).toBe(false);
    writeFileSync(at('d/e/f.md'), 'FOXTROT');
    await expectSameAsFullScan();
  });

  it('is ignored once closed, and for another directory', async () => {
    await settle();
    monitor.close();
    expect(monitor.trusted).toBe(false);
    writeFileSync(at('a.md'), 'ALPHA');
    await expectSameAsFullScan();
    const other = new ChangeMonitor(join(base.path, 'elsewhere'));
    await scanNotebook(L, { cache, monitor: other });
    expect(other.trusted).toBe(false);
  });

  it('sees every write made just before a scan (fence), over many rounds', async () => {
    await settle();
    // A chmod moves only the ctime: the stale stamp would still be a trusted cache hit. In L
    // itself, listed before the scan first yields to the event loop.
    for (let round = 0; round < 300; round += 1) {
      chmodSync(at('a.md'), round % 2 ? 0o644 : 0o600);
      const { files } = await scanNotebook(L, { cache, monitor });
      const now = lstatSync(at('a.md'), { bigint: true }).ctimeNs;
      expect(files.get('a.md')?.stamp.ctimeNs).toBe(now);
    }
  });

  it('equals a full scan after each of many random mutations', async () => {
    const dirs = ['', 'd/', 'd/e/', 'g/', 'r/', 'r/s/'];
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(items: T[]) => items[random(items.length)] as T;
    const file = () => `${pick(dirs)}${pick(['p', 'q', 'r', 's'])}.md`;
    const attempt = (op: () => void) => {
      try {
        op();
      } catch {
        // a mutation that does not apply to the current tree (missing parent, …)
      }
    };
    const mutations: (() => void)[] = [
      () => writeFileSync(at(file()), `${random(1000)}`),
      () => appendFileSync(at(file()), 'x'),
      () => rmSync(at(file()), { force: true }),
      () => renameSync(at(file()), at(file())),
      () => mkdirSync(at(pick(dirs)), { recursive: true }),
      () => rmSync(at(pick(dirs.slice(1))), { recursive: true, force: true }),
      () => utimesSync(at(file()), random(1e6), random(1e6)),
      () => symlinkSync(outside, at(`${pick(dirs)}link`)),
      () => renameSync(at(pick(dirs.slice(1)).slice(0, -1)), at(pick(dirs.slice(1)).slice(0, -1))),
    ];
    await settle();
    for (let round = 0; round < 300; round += 1) {
      for (let n = random(3) + 1; n > 0; n -= 1) attempt(pick(mutations));
      await expectSameAsFullScan();
    }
  }, 120_000);
});
