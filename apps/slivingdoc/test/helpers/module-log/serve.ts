import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { McpServerProcess } from '../mcp-server';

const register = pathToFileURL(join(import.meta.dirname, 'register.mjs'));

/**
 * Runs the built bin's `serve` (with `args`, in `env`) under the module log (`register.mjs`),
 * lets it answer one real `notes_pull`, stops it and returns the log's lines: every module URL
 * it resolved, in order, with the log's `#` marks among them.
 */
export async function moduleLogOfServe(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<string[]> {
  const log = join(env.HOME!, `modules-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
  const server = await McpServerProcess.start(args, {
    ...env,
    NODE_OPTIONS: `--import=${register.href}`,
    SLIVINGDOC_TEST_MODULE_LOG: log,
  });
  try {
    expect((await server.call('notes_pull', {})).structured.code).toBe('OK');
  } finally {
    await server.close();
  }
  return readFileSync(log, 'utf8').trim().split('\n');
}
