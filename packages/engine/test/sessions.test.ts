import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EngineConfigError } from '../src/index';
import { get, memoryStore, participant, put, rejection } from './helpers';

describe('sessions: participants of one service (serve --listen)', () => {
  it('each session has its own default directory and shares the notebook', async () => {
    const p = await participant(memoryStore());
    const alice = await p.service.session({ notebookDir: join(p.workspaceRoot, 'alice') });
    const bob = await p.service.session({ notebookDir: join(p.workspaceRoot, 'bob') });
    expect(alice.notebookDir).toBe(join(p.workspaceRoot, 'alice'));
    expect(alice.sets).toEqual(p.service.sets);
    await alice.pull({});
    await bob.pull({});
    await put(alice.notebookDir, 'a.md', 'from alice\n');
    expect(await alice.commit({ message: 'a', actor: 'alice' })).toMatchObject({
      code: 'OK',
      path: alice.notebookDir,
    });
    expect(await bob.pull({})).toMatchObject({ path: bob.notebookDir, filesChanged: 1 });
    expect(await get(bob.notebookDir, 'a.md')).toBe('from alice\n');
  });

  it("a session's path sets replace the service's, for it alone", async () => {
    const p = await participant(memoryStore(), { readOnly: ['docs'] });
    const scribe = await p.service.session({
      notebookDir: join(p.workspaceRoot, 'scribe'),
      writable: ['notes'],
    });
    expect(scribe.sets).toEqual({ writable: ['notes'], readOnly: [] });
    expect(p.service.sets).toEqual({ writable: [], readOnly: ['docs'] });
    await scribe.pull({});
    await put(scribe.notebookDir, 'docs.md', 'x\n');
    expect(await rejection(scribe.commit({ message: 'm' }))).toMatchObject({
      code: 'READ_ONLY_PATH',
      files: [{ path: 'docs.md', reason: 'READ_ONLY_PATH', ranges: [] }],
    });
    // The same directory through the service itself follows the service's own sets.
    await put(scribe.notebookDir, 'docs.md', 'x\n');
    expect(await p.service.commit({ path: scribe.notebookDir, message: 'm' })).toMatchObject({
      code: 'OK',
    });
  });

  it('a confined session reaches only its directory and below; anything else creates and reads nothing', async () => {
    const p = await participant(memoryStore());
    const alice = await p.service.session({
      notebookDir: join(p.workspaceRoot, 'alice'),
      confined: true,
    });
    const bob = await p.service.session({ notebookDir: join(p.workspaceRoot, 'bob') });
    await bob.pull({});
    await put(bob.notebookDir, 'secret.md', 'unpublished\n');
    const outside = [
      bob.notebookDir,
      join(bob.notebookDir, 'sub'),
      `${join(p.workspaceRoot, 'alice')}/../bob`,
      p.workspaceRoot,
      join(p.workspaceRoot, 'alice-other'),
    ];
    for (const path of outside)
      for (const call of [
        () => alice.pull({ path }),
        () => alice.commit({ path, message: 'm' }),
        () => alice.status({ path }),
        () => alice.log({ path, limit: 1 }),
      ])
        expect(await rejection(call())).toMatchObject({
          code: 'INVALID_REQUEST',
          reason: 'PATH_OUTSIDE_TOKEN_DIR',
        });
    expect(existsSync(join(bob.notebookDir, 'sub'))).toBe(false);
    expect(existsSync(join(p.workspaceRoot, 'alice-other'))).toBe(false);
    expect(await get(bob.notebookDir, 'secret.md')).toBe('unpublished\n');
    expect(await alice.pull({ path: join(p.workspaceRoot, 'alice') })).toMatchObject({
      code: 'OK',
    });
  });

  it('a commit-refused session pulls but answers every commit and revert READ_ONLY_SESSION', async () => {
    const p = await participant(memoryStore());
    const reader = await p.service.session({
      notebookDir: join(p.workspaceRoot, 'reader'),
      commitRefused: true,
    });
    await reader.pull({});
    await put(reader.notebookDir, 'a.md', 'x\n');
    for (const call of [
      () => reader.commit({ message: 'm' }),
      () => reader.revert({ generation: 1 }),
    ])
      expect(await rejection(call())).toMatchObject({
        code: 'READ_ONLY_SESSION',
        reason: 'TOKEN_READ_ONLY',
      });
    // Argument errors still come first, as for any commit.
    expect(await rejection(reader.commit({ message: ' ' }))).toMatchObject({
      reason: 'MESSAGE_INVALID',
    });
    expect(await get(reader.notebookDir, 'a.md')).toBe('x\n');
  });

  it('a reader service (readOnlyStore) pulls, refuses every commit and revert before any store call, and keeps L', async () => {
    const store = memoryStore();
    const writer = await participant(store);
    await writer.service.pull({ path: writer.dir });
    await put(writer.dir, 'a.md', 'one\n');
    await writer.service.commit({ path: writer.dir, message: 'first' });
    const reader = await participant(store, { readOnlyStore: true });
    expect(reader.service.commitsRefused).toBe('store');
    expect(await reader.service.pull({ path: reader.dir })).toMatchObject({ code: 'OK' });
    await put(reader.dir, 'a.md', 'edited by the reader\n');
    const before = store.calls.length;
    for (const call of [
      () => reader.service.commit({ path: reader.dir, message: 'm' }),
      () => reader.service.revert({ path: reader.dir, generation: 1 }),
    ])
      expect(await rejection(call())).toMatchObject({
        code: 'READ_ONLY_SESSION',
        reason: 'STORE_READ_ONLY',
      });
    // Refused before anything was read: not even `current`.
    expect(store.calls.length).toBe(before);
    expect(await get(reader.dir, 'a.md')).toBe('edited by the reader\n');
    // A read-only token's session on the reader names its token, the reader's own sessions the store.
    const token = await reader.service.session({
      notebookDir: join(reader.workspaceRoot, 'token'),
      commitRefused: true,
    });
    expect(token.commitsRefused).toBe('token');
    const own = await reader.service.session({ notebookDir: join(reader.workspaceRoot, 'own') });
    expect(own.commitsRefused).toBe('store');
    expect(writer.service.commitsRefused).toBeUndefined();
    // The next pull merges the accepted notebook as usual and keeps the reader's edit.
    await put(writer.dir, 'b.md', 'two\n');
    await writer.service.commit({ path: writer.dir, message: 'second' });
    expect(await reader.service.pull({ path: reader.dir })).toMatchObject({ code: 'OK' });
    expect(await get(reader.dir, 'b.md')).toBe('two\n');
    expect(await get(reader.dir, 'a.md')).toBe('edited by the reader\n');
  });

  it('refuses a session directory outside the workspace root', async () => {
    const p = await participant(memoryStore());
    await expect(p.service.session({ notebookDir: '/' })).rejects.toBeInstanceOf(EngineConfigError);
  });

  it('forget drops a directory and its private state; localChanges(under) looks below it only', async () => {
    const p = await participant(memoryStore());
    const a = await p.service.session({ notebookDir: join(p.workspaceRoot, 'a') });
    const b = await p.service.session({ notebookDir: join(p.workspaceRoot, 'b') });
    await a.pull({});
    await b.pull({});
    await put(b.notebookDir, 'draft.md', 'x\n');
    expect(await p.service.localChanges(a.notebookDir)).toEqual({
      managed: [a.notebookDir],
      unpublished: [],
    });
    expect((await p.service.localChanges()).unpublished).toEqual([b.notebookDir]);
    const before = await p.service.localChanges();
    expect(before.managed).toHaveLength(2);
    const privateDirs = async () => (await readdir(join(p.privateRoot, 'notebooks'))).length;
    expect(await privateDirs()).toBe(2);
    await p.service.forget(a.notebookDir);
    expect(existsSync(a.notebookDir)).toBe(true);
    expect(await privateDirs()).toBe(1);
    await rm(a.notebookDir, { recursive: true });
    expect((await p.service.localChanges()).managed).toEqual([b.notebookDir]);
  });
});
