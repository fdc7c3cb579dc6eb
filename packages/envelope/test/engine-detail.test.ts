import { describe, expect, it } from 'vitest';
import { engineDetailFor, internalError } from '../src';

const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code });

describe('engineDetailFor', () => {
  it.each([
    ['ENOSPC', 'disk full'],
    ['EDQUOT', 'disk full'],
    ['EACCES', 'permission denied'],
    ['EPERM', 'permission denied'],
    ['EROFS', 'read-only file system'],
    ['EMFILE', 'too many open files'],
    ['ENFILE', 'too many open files'],
    ['ENOMEM', 'out of memory'],
    ['ENAMETOOLONG', 'file name too long'],
  ])('maps %s to “%s”', (code, detail) => {
    expect(engineDetailFor(errno(code))).toBe(detail);
  });

  it('looks through cause chains and aggregate errors', () => {
    expect(engineDetailFor(new Error('outer', { cause: errno('EROFS') }))).toBe(
      'read-only file system',
    );
    expect(engineDetailFor(new AggregateError([new Error('x'), errno('EMFILE')]))).toBe(
      'too many open files',
    );
  });

  it('classifies nothing else, and survives cycles and non-errors', () => {
    const cyclic: { cause?: unknown } = {};
    cyclic.cause = cyclic;
    for (const value of [
      errno('ENOENT'),
      new Error('boom'),
      cyclic,
      'ENOSPC',
      null,
      undefined,
      42,
      { code: 'toString' },
    ])
      expect(engineDetailFor(value)).toBeUndefined();
  });
});

describe('internalError', () => {
  it('is ENGINE_FAILED · INTERNAL_ERROR with a detail only when classified, keeping the cause', () => {
    const classified = internalError(errno('ENOSPC'));
    expect([classified.code, classified.reason, classified.detail]).toEqual([
      'ENGINE_FAILED',
      'INTERNAL_ERROR',
      'disk full',
    ]);
    const plain = new Error('secret internals');
    const unclassified = internalError(plain);
    expect(unclassified.detail).toBeUndefined();
    expect(unclassified.cause).toBe(plain);
    expect(unclassified.message).not.toContain('secret internals');
  });
});
