import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PolicyError,
  parseRequestPath,
  type ResolveRequestInit,
  resolveRequestPath,
} from '../src/index';

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'policy-resolve-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'notebook'), { recursive: true });
  await mkdir(outside);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function init(requested: string | undefined, more: Partial<ResolveRequestInit> = {}) {
  return {
    requested,
    notebookDir: join(root, 'notebook'),
    workspaceRoot: root,
    managed: [],
    create: false,
    ...more,
  };
}

async function reasonOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PolicyError) return error.reason;
    throw error;
  }
  return undefined;
}

describe('resolveRequestPath', () => {
  it('returns the notebook directory when no path is requested', async () => {
    expect(await resolveRequestPath(init(undefined))).toBe(join(root, 'notebook'));
  });

  it('accepts the workspace root itself and directories below it', async () => {
    expect(await resolveRequestPath(init(root))).toBe(root);
    await mkdir(join(root, 'a/b'), { recursive: true });
    expect(await resolveRequestPath(init(join(root, 'a/b')))).toBe(join(root, 'a/b'));
  });

  it.each([
    ['a sibling with the root as string prefix', () => `${root}x`],
    ['the parent', () => base],
    ['an unrelated directory', () => outside],
  ])('refuses %s as PATH_OUTSIDE_ROOT', async (_name, path) => {
    expect(await reasonOf(resolveRequestPath(init(path())))).toBe('PATH_OUTSIDE_ROOT');
  });

  it('cleans .. before the containment check, so it cannot climb out of the root', async () => {
    const climbing = parseRequestPath(`${root}/notebook/../../outside`, { home: '/nowhere' });
    expect(climbing).toBe(outside);
    expect(await reasonOf(resolveRequestPath(init(climbing)))).toBe('PATH_OUTSIDE_ROOT');
    const staying = parseRequestPath(`${root}/x/../notebook`, { home: '/nowhere' });
    expect(await resolveRequestPath(init(staying))).toBe(join(root, 'notebook'));
  });

  it('refuses a symlink as the request path, even one pointing inside', async () => {
    await symlink(join(root, 'notebook'), join(root, 'link'));
    expect(await reasonOf(resolveRequestPath(init(join(root, 'link'))))).toBe('PATH_SYMLINK');
  });

  it('refuses a symlink as any component, also for a missing tail with create', async () => {
    await symlink(outside, join(root, 'escape'));
    const target = join(root, 'escape/sub/notebook');
    expect(await reasonOf(resolveRequestPath(init(target, { create: true })))).toBe('PATH_SYMLINK');
    expect(await stat(join(outside, 'sub')).catch(() => undefined)).toBeUndefined();
  });

  it('refuses a dangling symlink component', async () => {
    await symlink(join(base, 'nowhere'), join(root, 'dangling'));
    expect(await reasonOf(resolveRequestPath(init(join(root, 'dangling'), { create: true })))).toBe(
      'PATH_SYMLINK',
    );
  });

  it('refuses a file as PATH_NOT_DIRECTORY, also as an inner component', async () => {
    await writeFile(join(root, 'file.md'), 'x');
    expect(await reasonOf(resolveRequestPath(init(join(root, 'file.md'))))).toBe(
      'PATH_NOT_DIRECTORY',
    );
    expect(
      await reasonOf(resolveRequestPath(init(join(root, 'file.md/sub'), { create: true }))),
    ).toBe('PATH_NOT_DIRECTORY');
  });

  it('creates a missing directory for a pull and returns its realpath', async () => {
    const target = join(root, 'new/deeper');
    expect(await resolveRequestPath(init(target, { create: true }))).toBe(target);
    expect((await stat(target)).isDirectory()).toBe(true);
  });

  it('creates nothing without create and returns the cleaned path', async () => {
    const target = join(root, 'absent');
    expect(await resolveRequestPath(init(target))).toBe(target);
    expect(await stat(target).catch(() => undefined)).toBeUndefined();
  });

  it('refuses a directory inside or containing a managed one as NESTED_NOTEBOOK', async () => {
    const managed = [join(root, 'notebook')];
    await mkdir(join(root, 'notebook/sub'));
    expect(await reasonOf(resolveRequestPath(init(join(root, 'notebook/sub'), { managed })))).toBe(
      'NESTED_NOTEBOOK',
    );
    expect(await reasonOf(resolveRequestPath(init(root, { managed })))).toBe('NESTED_NOTEBOOK');
    const created = join(root, 'notebook/new');
    expect(await reasonOf(resolveRequestPath(init(created, { managed, create: true })))).toBe(
      'NESTED_NOTEBOOK',
    );
    expect(await stat(created).catch(() => undefined)).toBeUndefined();
  });

  it('accepts the managed directory itself and a sibling whose name extends it', async () => {
    const managed = [join(root, 'notebook')];
    expect(await resolveRequestPath(init(join(root, 'notebook'), { managed }))).toBe(
      join(root, 'notebook'),
    );
    expect(await resolveRequestPath(init(join(root, 'notebook2'), { managed, create: true }))).toBe(
      join(root, 'notebook2'),
    );
  });
});
