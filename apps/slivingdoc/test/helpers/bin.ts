import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The built bin; tests that spawn it need `pnpm --filter slivingdoc build` first. */
export const bin = join(import.meta.dirname, '../../dist/cli.js');

export function assertBuilt(): void {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build the app first (pnpm build)`);
}

/** The sandboxes this test file made, removed after it (`test/setup/remove-sandboxes.ts`). */
const sandboxes: string[] = [];

/**
 * Removes every sandbox made so far. Never throws: a process a test killed may still be
 * writing into one, and a leftover in the temp directory must not fail the run.
 */
export async function removeSandboxes(): Promise<void> {
  const made = sandboxes.splice(0);
  await Promise.all(
    made.map((home) =>
      rm(home, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined),
    ),
  );
}

/** A private HOME/XDG/TMPDIR sandbox, so no test touches the real home or shared store. */
export function sandboxEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'slivingdoc-test-home-'));
  sandboxes.push(home);
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: home,
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    // Never let the AWS SDK look for instance credentials beyond loopback.
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

export interface BinRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bin to completion. */
export function runBin(
  args: string[],
  env: NodeJS.ProcessEnv = sandboxEnv(),
  cwd?: string,
): BinRun {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
    ...(cwd ? { cwd } : {}),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the bin and returns its stdout; throws with the whole run unless it exited 0. */
export function runBinOk(args: string[], env: NodeJS.ProcessEnv): string {
  const run = runBin(args, env);
  if (run.status !== 0) throw new Error(`slivingdoc ${args[0]} failed: ${JSON.stringify(run)}`);
  return run.stdout;
}

/** Runs the bin to completion without blocking, so many processes can run at once. */
export function runBinAsync(args: string[], env: NodeJS.ProcessEnv): Promise<BinRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, timeout: 120_000 });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({
        status,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}
