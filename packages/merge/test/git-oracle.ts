import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Canonical git as an independent oracle (tests only; the product never runs git). Runs with no
 * user or system configuration so results do not depend on the machine.
 */
export function git(
  args: string[],
  opts: { cwd: string; input?: Uint8Array | string },
): { stdout: Buffer; stderr: string; status: number } {
  const run = spawnSync('git', args, {
    cwd: opts.cwd,
    input: opts.input,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: opts.cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
      GIT_AUTHOR_NAME: 'oracle',
      GIT_AUTHOR_EMAIL: 'oracle@localhost',
      GIT_COMMITTER_NAME: 'oracle',
      GIT_COMMITTER_EMAIL: 'oracle@localhost',
    },
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error) throw run.error;
  return { stdout: run.stdout, stderr: run.stderr.toString(), status: run.status ?? -1 };
}

/** Like {@link git} but throws on a non-zero exit. */
export function gitOk(args: string[], opts: { cwd: string; input?: Uint8Array | string }): Buffer {
  const run = git(args, opts);
  if (run.status !== 0)
    throw new Error(`git ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

/** A fresh temporary directory and its remover. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh bare repository for the oracle. */
export function bareRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  gitOk(['init', '--bare', '-q', dir], { cwd: dir });
  return dir;
}

export const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
export const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

/**
 * Test stand-in for policy's `foldKey` (which the merge package may not import): NFC, then
 * upper- then lower-casing, which covers the full foldings these tests use (ß → ss).
 */
export const testFoldKey = (path: string): string =>
  path.normalize('NFC').toUpperCase().toLowerCase();
