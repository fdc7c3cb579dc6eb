import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, sandboxEnv } from './helpers/bin';

beforeAll(assertBuilt);

// The Inspector CLI's entry (its package exports nothing, so resolve its package.json).
const inspectorDir = dirname(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json'),
);

/**
 * Runs the MCP Inspector CLI against the built server. It checks `../package.json` relative
 * to the working directory but imports it relative to itself, so it must run from a directory
 * whose parent holds a package.json: this test directory does.
 */
function inspect(args: string[]): unknown {
  const run = spawnSync(
    process.execPath,
    [join(inspectorDir, 'build/index.js'), process.execPath, bin, 'serve', ...args],
    { cwd: import.meta.dirname, env: sandboxEnv(), encoding: 'utf8', timeout: 120_000 },
  );
  if (run.status !== 0) throw new Error(`inspector failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}

describe('the MCP Inspector CLI against the built server', () => {
  it('lists exactly the two tools', () => {
    const listed = inspect(['--method', 'tools/list']) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toEqual(['notes_pull', 'notes_commit']);
  });

  it('calls notes_pull successfully', () => {
    const result = inspect(['--method', 'tools/call', '--tool-name', 'notes_pull']);
    expect(result).toMatchObject({
      content: [{ type: 'text', text: expect.stringMatching(/\/slivingdoc-[^/]+\/notebook$/) }],
      structuredContent: { code: 'OK', generation: 0, files: [], readOnly: [], writable: [] },
    });
    expect(result).not.toHaveProperty('isError');
  });
});
