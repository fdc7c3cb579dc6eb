/**
 * Concurrent additions end to end (contract §6): many `slivingdoc serve` processes of the built bin
 * append one line each to the same file and call notes_commit at once, on the embedded store
 * and on the real S3 server. Kept additions land without a conflict; `--merge-additions=conflict`
 * brings git's rule back.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { type RawServer, startNotebookServer, type ToolResult } from './helpers/raw-server';
import { realS3Env } from './helpers/real-s3';

beforeAll(assertBuilt);
const servers: RawServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.child.kill('SIGKILL');
});

const FILE = 'shared.md';
const HEADER = '# shared log\n';

/**
 * Seeds the file with the CLI, starts `agents` servers that each pull and append one line,
 * then has every server commit at once; returns each result and the file as accepted.
 */
async function appendBurst(env: NodeJS.ProcessEnv, agents: number, flags: string[]) {
  const seed = join(realpathSync(mkdtempSync(join(tmpdir(), 'slivingdoc-test-burst-'))), 'nb');
  expect(runBin(['pull', seed], env).status).toBe(0);
  writeFileSync(join(seed, FILE), HEADER);
  expect(runBin(['commit', seed, '-m', 'seed'], env).status).toBe(0);

  const started = await Promise.all(
    Array.from({ length: agents }, () => startNotebookServer(env, flags)),
  );
  servers.push(...started.map((agent) => agent.server));
  const pulls = await Promise.all(started.map((agent) => agent.call('notes_pull', {})));
  expect(pulls.map((pull) => pull.structuredContent.code)).toEqual(started.map(() => 'OK'));
  const lines = started.map((_, n) => `- finding of agent ${n}`);
  for (const [n, agent] of started.entries())
    appendFileSync(join(agent.notebookDir, FILE), `${lines[n]}\n`);
  const commits: ToolResult[] = await Promise.all(
    started.map((agent, n) => agent.call('notes_commit', { message: `agent ${n}` })),
  );
  expect(runBin(['pull', seed], env).status).toBe(0);
  const dirs = started.map((agent) => agent.notebookDir);
  return { commits, dirs, lines, final: readFileSync(join(seed, FILE), 'utf8') };
}

/** 20 servers, default flags: 20 commit calls, all OK, every line once. */
async function keptBurst(env: NodeJS.ProcessEnv): Promise<void> {
  const agents = 20;
  const { commits, lines, final } = await appendBurst(env, agents, []);
  for (const commit of commits)
    expect(commit.structuredContent).toMatchObject({
      code: 'OK',
      files: [{ path: FILE, insertions: 1, deletions: 0 }],
    });
  expect(final.startsWith(HEADER)).toBe(true);
  expect(final).not.toContain('<<<<<<<');
  const body = final
    .slice(HEADER.length)
    .split('\n')
    .filter((line) => line !== '');
  expect([...body].sort()).toEqual([...lines].sort());
  const generations = commits.map((commit) => commit.structuredContent.generation as number);
  // The seed is generation 1; every publication after it adds one. Commits grouped into one
  // publication (docs/engine.md, "Group commit") share its generation, so the distinct
  // generations run 2, 3, … without a gap, one per publication, at most one per commit.
  const published = [...new Set(generations)].sort((x, y) => x - y);
  expect(published).toEqual(published.map((_, n) => n + 2));
  expect(published.length).toBeLessThanOrEqual(lines.length);
}

/** A handful of servers with `--merge-additions=conflict`: git's rule, markers appear. */
async function conflictBurst(env: NodeJS.ProcessEnv): Promise<void> {
  const agents = 5;
  const { commits, dirs } = await appendBurst(env, agents, ['--merge-additions=conflict']);
  const codes = commits.map((commit) => commit.structuredContent.code);
  const ok = codes.filter((code) => code === 'OK');
  const conflicted = codes.filter((code) => code === 'CONTENT_CONFLICT');
  // Everyone pulled before anyone committed: the first to publish wins, every later one
  // merges against an R that appended after the same line.
  expect(ok).toHaveLength(1);
  expect(conflicted).toHaveLength(agents - 1);
  const withMarkers = dirs.filter((dir) =>
    readFileSync(join(dir, FILE), 'utf8').includes('<<<<<<< local\n'),
  );
  expect(withMarkers).toHaveLength(agents - 1);
}

describe('an append burst of serve processes of the built bin', () => {
  it('on one embedded store: 20 appends at once, 0 conflicts, each line once', async () => {
    await keptBurst(sandboxEnv({ SLIVINGDOC_PREFIX: `burst-${randomUUID()}` }));
  }, 480_000);

  it('on one embedded store with --merge-additions=conflict: the old conflicts', async () => {
    await conflictBurst(sandboxEnv({ SLIVINGDOC_PREFIX: `burst-${randomUUID()}` }));
  }, 240_000);

  it('on the real S3 server: 20 appends at once, 0 conflicts, each line once', async () => {
    await keptBurst(sandboxEnv(await realS3Env()));
  }, 480_000);

  it('on the real S3 server with --merge-additions=conflict: the old conflicts', async () => {
    await conflictBurst(sandboxEnv(await realS3Env()));
  }, 240_000);
});
