import {
  constants,
  existsSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createExclusive, fillNewFile } from '../src/durable-write';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fill-new-file-'));
  dirs.push(dir);
  return dir;
};

describe('fillNewFile (the one temp-file write sequence)', () => {
  it('writes, closes and returns the stat of what it wrote', async () => {
    const path = join(freshDir(), 'temp');
    const fd = createExclusive(path, 0o600);
    const written = await fillNewFile(fd, path, 'content\n', { sync: true });
    expect(readFileSync(path, 'utf8')).toBe('content\n');
    expect(written.ino).toBe(BigInt(statSync(path).ino));
    expect(written.size).toBe(8n);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(() => fstatSync(fd)).toThrow(expect.objectContaining({ code: 'EBADF' })); // closed
  });

  it('on a failed write closes and removes the file and rethrows', async () => {
    const path = join(freshDir(), 'temp');
    // Created exclusively but read-only: the write fails (EBADF) after the file exists.
    const fd = openSync(path, constants.O_RDONLY | constants.O_CREAT | constants.O_EXCL);
    await expect(fillNewFile(fd, path, 'content', { sync: true })).rejects.toMatchObject({
      code: 'EBADF',
    });
    expect(existsSync(path)).toBe(false);
    expect(() => fstatSync(fd)).toThrow(expect.objectContaining({ code: 'EBADF' }));
  });
});
