import { constants, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillNewFile } from '../src/durable-write';

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
    const handle = await open(path, 'wx', 0o600);
    const written = await fillNewFile(handle, path, 'content\n', { sync: true });
    expect(readFileSync(path, 'utf8')).toBe('content\n');
    expect(written.ino).toBe(BigInt(statSync(path).ino));
    expect(written.size).toBe(8n);
    expect(handle.fd).toBe(-1); // closed
  });

  it('on a failed write closes and removes the file and rethrows', async () => {
    const path = join(freshDir(), 'temp');
    // Created exclusively but read-only: the write fails (EBADF) after the file exists.
    const handle = await open(path, constants.O_RDONLY | constants.O_CREAT | constants.O_EXCL);
    await expect(fillNewFile(handle, path, 'content', { sync: true })).rejects.toMatchObject({
      code: 'EBADF',
    });
    expect(existsSync(path)).toBe(false);
    expect(handle.fd).toBe(-1);
  });
});
