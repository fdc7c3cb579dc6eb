import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { McpServerProcess } from './helpers/mcp-server';
import { realS3Env } from './helpers/real-s3';

// docs/review.md end to end: the person's CLI and an agent's real stdio server on one store.

const running: McpServerProcess[] = [];
beforeAll(() => assertBuilt());
afterAll(async () => {
  for (const server of running.splice(0)) await server.close();
});

/** A person's pulled directory and an agent's server on the same store. */
async function setUp(extra: NodeJS.ProcessEnv) {
  const env = sandboxEnv({ ...extra, SLIVINGDOC_ACTOR: 'ann' });
  const home = realpathSync(env.HOME!);
  const person = join(home, 'person');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  expect(runBin(['pull', person], env).status).toBe(0);
  writeFileSync(join(person, 'decisions.md'), 'one\ntwo\nthree\n');
  expect(runBin(['commit', person, '-m', 'seed'], env).status).toBe(0);
  const agentEnv = { ...env };
  delete agentEnv.SLIVINGDOC_ACTOR;
  const agent = await McpServerProcess.start(['--workspace-root', ws], agentEnv, 'bot');
  running.push(agent);
  expect((await agent.call('notes_pull', {})).structured).toMatchObject({ code: 'OK' });
  return { env, person, agent, ws };
}

function json(run: { status: number | null; stdout: string; stderr: string }) {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout);
}

/** Each test runs a dozen processes one after another: bounded generously for a loaded machine. */
const SLOW = { timeout: 300_000 };

describe.each([
  ['the embedded store', async () => ({})],
  ['the real S3 server', realS3Env],
])('review through the CLI and a stdio server on %s', SLOW, (_name, storeEnv) => {
  it('queue → pending → approve publishes once with author and approver; reject publishes nothing', async () => {
    const { env, person, agent, ws } = await setUp(await storeEnv());
    const before = await agent.client.listTools();
    expect(before.tools.find((t) => t.name === 'notes_commit')?.description).not.toContain(
      'Review applies',
    );
    expect(runBin(['review', 'set', 'queue'], env).status).toBe(0);
    expect(json(runBin(['review', 'show', '--json'], env))).toMatchObject({
      state: 'stored',
      setting: { notebook: { mode: 'queue' } },
    });
    // Without a restart: the next tools/list says so, and the next commit is queued.
    const after = await agent.client.listTools();
    expect(after.tools.find((t) => t.name === 'notes_commit')?.description).toContain(
      'Review applies',
    );
    writeFileSync(join(ws, 'decisions.md'), 'one\nTWO\u200b\nthree\n');
    const pending = await agent.call('notes_commit', { message: 'agent edit\u202e' });
    expect(pending.isError).toBe(false);
    expect(pending.structured).toMatchObject({ code: 'OK', status: 'pending', revision: 1 });
    expect(pending.text).toContain('Nothing was published; a person must approve it.');
    const id = pending.structured.proposalId as string;
    expect(json(runBin(['status', ws, '--json'], env))).toMatchObject({
      state: 'changed',
      proposal: { id, revision: 1, state: 'open' },
    });
    expect(runBin(['status', ws], env).stdout).toContain(
      `  proposal  ${id} revision 1, waiting for a person (slivingdoc proposals show ${id})`,
    );
    const listed = json(runBin(['proposals', 'list', '--json'], env));
    expect(listed).toMatchObject([{ id, state: 'open', actor: 'bot', files: ['decisions.md'] }]);
    const shown = runBin(['proposals', 'show', id], env);
    expect(shown.stdout).toContain('+TWO⟨U+200B⟩');
    expect(shown.stdout).toContain('agent edit⟨U+202E⟩');
    // Approve through the person's clean copy.
    const approved = runBin(['proposals', 'approve', id, person, '--revision', '1', '--json'], env);
    expect(json(approved)).toMatchObject({
      state: 'approved',
      decision: { by: 'ann', generation: '2', revision: 1 },
    });
    const log = json(runBin(['log', person, '--json', '--full'], env));
    expect(log.publications[0]).toMatchObject({ generation: 2, actor: 'bot' });
    expect(log.publications[0].message).toContain('Approved-by: ann');
    // The approval publishes without writing the person's copy; its next pull brings it in.
    expect(readFileSync(join(person, 'decisions.md'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(runBin(['pull', person], env).status).toBe(0);
    expect(readFileSync(join(person, 'decisions.md'), 'utf8')).toBe('one\nTWO\u200b\nthree\n');
    const again = runBin(['proposals', 'approve', id, person], env);
    expect(again.status).toBe(1);
    expect(again.stdout).toContain('REVIEW · PROPOSAL_DECIDED');
    const pulled = await agent.call('notes_pull', {});
    expect(pulled.structured.proposalOutcome).toMatchObject({ status: 'approved', by: 'ann' });
    expect(pulled.text).toContain('was approved by ann');

    // Reject: nothing published, bytes kept, the agent told at its next call.
    writeFileSync(join(ws, 'decisions.md'), 'no\n');
    const second = await agent.call('notes_commit', { message: 'second' });
    const secondId = second.structured.proposalId as string;
    expect(secondId).not.toBe(id);
    const rejected = runBin(['proposals', 'reject', secondId, '--reason', 'keep it'], env);
    expect(rejected.status).toBe(0);
    expect(json(runBin(['proposals', 'show', secondId, '--json'], env))).toMatchObject({
      state: 'rejected',
      decision: { by: 'ann', reason: 'keep it' },
    });
    const told = await agent.call('notes_commit', { message: 'second' });
    expect(told.structured.proposalOutcome).toMatchObject({ status: 'rejected' });
    expect(told.structured.status).toBeUndefined();
    expect(told.text).toContain('keep it');
    expect(json(runBin(['log', person, '--json'], env)).storeGeneration).toBe(2);
  });

  it('--paths queues only commits touching those paths; an --actor rule never binds over stdio', async () => {
    const { env, person, agent, ws } = await setUp(await storeEnv());
    // The client claims the name "bot": over stdio that is not an authenticated actor.
    expect(runBin(['review', 'set', 'queue', '--actor', 'bot'], env).status).toBe(0);
    writeFileSync(join(ws, 'scratch.md'), 'free\n');
    const direct = await agent.call('notes_commit', { message: 'scratch' });
    expect(direct.structured).toMatchObject({ code: 'OK', generation: 2 });
    expect(direct.structured.status).toBeUndefined();

    expect(runBin(['review', 'set', 'queue', '--paths', 'decisions.md'], env).status).toBe(0);
    writeFileSync(join(ws, 'scratch.md'), 'free\nstill free\n');
    const outside = await agent.call('notes_commit', { message: 'scratch again' });
    expect(outside.structured).toMatchObject({ code: 'OK', generation: 3 });
    // A commit touching a queued path is proposed whole, scratch.md included.
    writeFileSync(join(ws, 'scratch.md'), 'free\nstill free\nand more\n');
    writeFileSync(join(ws, 'decisions.md'), 'one\ntwo\nthree\nfour\n');
    const queued = await agent.call('notes_commit', { message: 'both' });
    expect(queued.structured).toMatchObject({ code: 'OK', status: 'pending' });
    const id = queued.structured.proposalId as string;
    const shown = json(runBin(['proposals', 'show', id, '--json'], env));
    expect([...shown.files].sort()).toEqual(['decisions.md', 'scratch.md']);
    expect(runBin(['pull', person], env).status).toBe(0);
    expect(readFileSync(join(person, 'scratch.md'), 'utf8')).toBe('free\nstill free\n');
    expect(readFileSync(join(person, 'decisions.md'), 'utf8')).toBe('one\ntwo\nthree\n');
  });
});

describe('review: bad input through the CLI', () => {
  it('unknown ids, bad modes and a direct setting', async () => {
    const env = sandboxEnv();
    const missing = runBin(['proposals', 'show', '0123456789abcdef-9'], env);
    expect([missing.status, missing.stdout]).toEqual([
      1,
      expect.stringContaining('REVIEW · PROPOSAL_NOT_FOUND'),
    ]);
    const bad = runBin(['review', 'set', 'audit'], env);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('review needs set queue|direct');
    const paths = runBin(['review', 'set', 'queue', '--paths', '../x'], env);
    expect(paths.status).not.toBe(0);
    expect(runBin(['review', 'show'], env).stdout).toBe('notebook: direct\n');
  });
});
