import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const APP = join(dirname(fileURLToPath(import.meta.url)), '../../apps/slivingdoc');
/** The built `slivingdoc` bin (`pnpm build` makes it). */
const BUILT_CLI = join(APP, 'dist/cli.js');
let CLI = BUILT_CLI;

/** The bin later runs use (the private copy once {@link requireBuiltCli} made it). */
export function builtCliPath(): string {
  return CLI;
}

/** What one real `slivingdoc` process did. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Throws unless the bin is built (these suites drive the real process), then runs every
 * later call from a private copy of `dist/`: a concurrent `pnpm build` replaces the hashed
 * chunk files, which would make a bin started mid-build fail to load. The copy sits next
 * to a `node_modules` link to the app's, so its dependencies resolve as in the original.
 */
export async function requireBuiltCli(): Promise<void> {
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run pnpm build first`);
  if (CLI !== BUILT_CLI) return;
  const copy = await mkdtemp(join(tmpdir(), 'slivingdoc-cli-'));
  await cp(join(APP, 'dist'), join(copy, 'dist'), { recursive: true });
  await symlink(join(APP, 'node_modules'), join(copy, 'node_modules'));
  CLI = join(copy, 'dist/cli.js');
}

/**
 * Runs `slivingdoc <args>` as a real child process with exactly `env` (plus PATH), no TTY,
 * collecting both streams.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { measureMemory?: boolean; onSpawn?: (child: ChildProcess) => void } = {},
): Promise<CliRun> {
  // GNU time reports the child's peak resident set size on the last stderr line.
  const [command, argv] = opts.measureMemory
    ? ['/usr/bin/time', ['-f', 'maxrss-kib=%M', process.execPath, CLI, ...args]]
    : [process.execPath, [CLI, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    opts.onSpawn?.(child);
  });
}

/** Peak resident set size in MiB from a run made with `measureMemory`. */
export function peakMemoryMiB(run: CliRun): number {
  const match = /maxrss-kib=(\d+)\s*$/.exec(run.stderr);
  if (!match) throw new Error('no memory figure: run with measureMemory');
  return Number(match[1]) / 1024;
}
