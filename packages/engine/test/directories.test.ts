import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { refuseWrites } from '@slivingdoc/testkit/refuse-writes';
import { describe, expect, it } from 'vitest';
import { FAILPOINT, FailpointRegistry } from '../src/index';
import { engineFailure, memoryStore, participant, put, rejection, snapshot } from './helpers';

describe('several notebook directories under one service (contract §2)', () => {
  it('a pull that cannot create its directory in L is ENGINE_FAILED · LOCAL_WRITE_FAILED', async () => {
    const p = await participant(memoryStore());
    const parent = join(p.workspaceRoot, 'locked');
    await mkdir(parent);
    const undo = refuseWrites(parent);
    try {
      const refused = await engineFailure(p.service.pull({ path: join(parent, 'nb') }));
      expect(refused).toMatchObject({
        code: 'ENGINE_FAILED',
        reason: 'LOCAL_WRITE_FAILED',
        detail: 'permission denied',
      });
    } finally {
      undo();
    }
    expect(await readdir(parent)).toEqual([]);
  });

  it('refuses a directory inside or containing a managed one with NESTED_NOTEBOOK', async () => {
    const store = memoryStore();
    const p = await participant(store);
    const managed = join(p.workspaceRoot, 'team', 'a');
    await p.service.pull({ path: managed });
    for (const path of [join(managed, 'inner'), join(p.workspaceRoot, 'team')]) {
      const pull = await rejection(p.service.pull({ path }));
      expect(pull).toMatchObject({ code: 'INVALID_REQUEST', reason: 'NESTED_NOTEBOOK' });
      const commit = await rejection(p.service.commit({ path, message: 'm' }));
      expect(commit).toMatchObject({ code: 'INVALID_REQUEST', reason: 'NESTED_NOTEBOOK' });
    }
    // The refused pull created nothing below the managed directory.
    expect(await readdir(managed)).toEqual([]);
    // A sibling is independent, and a managed directory that vanished no longer counts.
    await p.service.pull({ path: join(p.workspaceRoot, 'team', 'b') });
    await rm(managed, { recursive: true });
    const inner = await p.service.pull({ path: join(managed, 'inner') });
    expect(inner).toMatchObject({ code: 'OK', path: join(managed, 'inner') });
  });

  it('serves four directories concurrently, each with its own P, all converging on one notebook', async () => {
    const store = memoryStore();
    const p = await participant(store);
    const dirs = ['d1', 'd2', 'd3', 'd4'].map((d) => join(p.workspaceRoot, d));
    await Promise.all(dirs.map((path) => p.service.pull({ path })));
    const results = await Promise.all(
      dirs.map(async (path, i) => {
        await put(path, `from-${i}.md`, `${i}\n`);
        return p.service.commit({ path, message: `d${i}` });
      }),
    );
    expect(results.map((r) => r.generation).sort()).toEqual([1, 2, 3, 4]);
    expect(results.map((r) => r.path)).toEqual(dirs);
    await Promise.all(dirs.map((path) => p.service.pull({ path })));
    const expected = {
      'from-0.md': '0\n',
      'from-1.md': '1\n',
      'from-2.md': '2\n',
      'from-3.md': '3\n',
    };
    for (const path of dirs) expect(await snapshot(path)).toEqual(expected);
    expect(await readdir(join(p.privateRoot, 'notebooks'))).toHaveLength(4);
  });
});

describe('files that are not notebook state (contract §4)', () => {
  async function litter(dir: string): Promise<void> {
    await put(dir, 'ok.md', 'fine\n');
    await symlink('ok.md', join(dir, 'link.md'));
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    await writeFile(join(dir, 'latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await writeFile(join(dir, 'zero.md'), 'a\u0000b\n');
    await put(dir, 'sub/CON.md', 'device name\n');
    await put(dir, 'Case.md', 'one\n');
    await put(dir, 'CASE.md', 'two\n');
  }

  it('pull reports each file with its reason, changes nothing and does not register the directory', async () => {
    const store = memoryStore();
    const p = await participant(store);
    await mkdir(p.dir, { recursive: true });
    await litter(p.dir);
    store.clearCalls();
    const err = await rejection(p.service.pull({}));
    expect(err).toMatchObject({ code: 'INVALID_CONTENT', reason: 'UNSUPPORTED_FILES' });
    const files = (err.files as { path: string; reason: string; ranges: unknown[] }[]).map((f) => [
      f.path,
      f.reason,
    ]);
    expect(files).toEqual([
      ['CASE.md', 'NAME_COLLISION'],
      ['Case.md', 'NAME_COLLISION'],
      ['latin1.md', 'NOT_UTF8'],
      ['link.md', 'SYMLINK'],
      ['pipe', 'SPECIAL_FILE'],
      ['sub/CON.md', 'INVALID_NAME'],
      ['zero.md', 'CONTAINS_NUL'],
    ]);
    expect(store.calls).toEqual([]);
    expect((await readdir(p.dir)).sort()).toEqual(
      ['CASE.md', 'Case.md', 'latin1.md', 'link.md', 'ok.md', 'pipe', 'sub', 'zero.md'].sort(),
    );
    const commit = await rejection(p.service.commit({ message: 'm' }));
    expect(commit).toMatchObject({ code: 'INVALID_REQUEST', reason: 'NOT_PULLED' });
  });

  it('commit refuses them before any store call and publishes nothing', async () => {
    const store = memoryStore();
    const p = await participant(store);
    await p.service.pull({});
    await put(p.dir, 'good.md', 'good\n');
    await symlink('good.md', join(p.dir, 'link.md'));
    store.clearCalls();
    const err = await rejection(p.service.commit({ message: 'm' }));
    expect(err).toMatchObject({
      code: 'INVALID_CONTENT',
      reason: 'UNSUPPORTED_FILES',
      files: [{ path: 'link.md', reason: 'SYMLINK', ranges: [] }],
    });
    expect(store.calls).toEqual([]);
    await rm(join(p.dir, 'link.md'));
    expect(await p.service.commit({ message: 'm' })).toMatchObject({ code: 'OK', generation: 1 });
  });
});

describe('order of checks, first failure wins (contract §2)', () => {
  it('decode before path: PATH_INVALID, then MESSAGE_INVALID, before any path problem', async () => {
    const store = memoryStore();
    const p = await participant(store);
    expect(await rejection(p.service.commit({ path: 'relative', message: ' ' }))).toMatchObject({
      reason: 'PATH_INVALID',
    });
    expect(await rejection(p.service.commit({ path: '/elsewhere', message: ' ' }))).toMatchObject({
      reason: 'MESSAGE_INVALID',
    });
    expect(await rejection(p.service.commit({ path: '/elsewhere', message: 'm' }))).toMatchObject({
      reason: 'PATH_OUTSIDE_ROOT',
    });
    expect(store.calls).toEqual([]);
  });

  it('path before NOT_PULLED, NOT_PULLED before the scan, and nothing created', async () => {
    const store = memoryStore();
    const p = await participant(store);
    await put(p.workspaceRoot, 'file.md', 'x\n');
    expect(
      await rejection(p.service.commit({ path: join(p.workspaceRoot, 'file.md'), message: 'm' })),
    ).toMatchObject({ reason: 'PATH_NOT_DIRECTORY' });
    await mkdir(p.dir);
    await symlink('nowhere', join(p.dir, 'dangling.md'));
    expect(await rejection(p.service.commit({ message: 'm' }))).toMatchObject({
      reason: 'NOT_PULLED',
    });
    const missing = join(p.workspaceRoot, 'missing');
    expect(await rejection(p.service.commit({ path: missing, message: 'm' }))).toMatchObject({
      reason: 'NOT_PULLED',
    });
    expect((await readdir(p.workspaceRoot)).sort()).toEqual(['file.md', 'notebook']);
    await expect(readdir(p.privateRoot)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(store.calls).toEqual([]);
  });

  it('scan before markers, markers before path sets, path sets before the store', async () => {
    const store = memoryStore();
    const owner = await participant(store);
    await owner.service.pull({});
    await put(owner.dir, 'ref/r.md', 'r\n');
    await owner.service.commit({ message: 'seed' });
    const p = await participant(store, { readOnly: ['ref'] });
    await p.service.pull({});
    await put(p.dir, 'ref/r.md', 'changed\n');
    await put(p.dir, 'm.md', '<<<<<<< local\na\n=======\nb\n>>>>>>> remote\n');
    await writeFile(join(p.dir, 'bad.md'), Buffer.from([0xff]));
    store.clearCalls();
    expect(await rejection(p.service.commit({ message: 'm' }))).toMatchObject({
      reason: 'UNSUPPORTED_FILES',
      files: [{ path: 'bad.md', reason: 'NOT_UTF8' }],
    });
    await rm(join(p.dir, 'bad.md'));
    expect(await rejection(p.service.commit({ message: 'm' }))).toMatchObject({
      reason: 'UNRESOLVED_MARKERS',
      files: [{ path: 'm.md', reason: 'MARKER_BLOCK', ranges: [{ start: 1, end: 5 }] }],
    });
    // The markers refusal reset nothing.
    expect(await snapshot(p.dir)).toMatchObject({ 'ref/r.md': 'changed\n' });
    await put(p.dir, 'm.md', 'resolved\n');
    // Path sets are decided before the store: it fails every call, and is never asked.
    store.inject({ op: 'get', action: { type: 'fail', kind: 'unreachable' } });
    expect(await rejection(p.service.commit({ message: 'm' }))).toMatchObject({
      reason: 'CHANGE_OUTSIDE_WRITABLE',
    });
    expect(store.calls).toEqual([]);
    expect(await snapshot(p.dir)).toEqual({ 'm.md': 'resolved\n', 'ref/r.md': 'r\n' });
    // Only now does the store answer, with its failure.
    expect(await rejection(p.service.commit({ message: 'm' }))).toMatchObject({
      code: 'STORAGE_FAILURE',
      reason: 'STORE_UNREACHABLE',
    });
  });

  it('a held lock is PATH_BUSY before anything else is looked at', async () => {
    const store = memoryStore();
    const failpoints = new FailpointRegistry();
    const { service, dir } = await participant(store, { lockTimeoutMs: 50, failpoints });
    await service.pull({});
    // A pull that holds the lock, parked at a barrier right after its scan.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let parked: () => void = () => {};
    const reached = new Promise<void>((resolve) => {
      parked = resolve;
    });
    failpoints.set(
      FAILPOINT.afterScan,
      async () => {
        parked();
        await gate;
      },
      1,
    );
    const holder = service.pull({});
    await reached;
    await put(dir, 'x.md', '<<<<<<< local\na\n=======\nb\n>>>>>>> remote\n');
    expect(await rejection(service.commit({ message: 'm' }))).toMatchObject({
      code: 'PATH_BUSY',
      reason: 'LOCK_TIMEOUT',
    });
    release();
    await holder;
    expect(await rejection(service.commit({ message: 'm' }))).toMatchObject({
      reason: 'UNRESOLVED_MARKERS',
    });
    await service.close();
  });
});
