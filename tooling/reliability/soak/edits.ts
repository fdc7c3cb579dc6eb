/** The soak writers' file edits in L: read a file as text, insert one line at a position. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A file's text; empty when it does not exist. */
export async function readText(path: string): Promise<string> {
  return readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
}

/** Inserts `line` before line `at` (zero-based; past the end appends), creating the file. */
export async function insertLine(
  dir: string,
  file: string,
  line: string,
  at: number,
): Promise<void> {
  const path = join(dir, file);
  const lines = (await readText(path)).match(/[^\n]*\n/g) ?? [];
  lines.splice(Math.min(at, lines.length), 0, `${line}\n`);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, lines.join(''));
}
