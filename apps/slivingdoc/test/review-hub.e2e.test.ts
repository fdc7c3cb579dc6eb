import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import {
  addToken,
  HubProcess,
  INITIALIZE,
  mcpHeaders,
  rawRequest,
  withConfigHome,
} from './helpers/http-hub';
import { realS3Env } from './helpers/real-s3';

// docs/review.md through the hub: authenticated actors, stricter tokens, reviewer tokens.

const hubs: HubProcess[] = [];
beforeAll(assertBuilt);
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.stop('SIGKILL');
});

/** Each test runs a dozen processes one after another: bounded generously for a loaded machine. */
const SLOW = { timeout: 300_000 };

describe.each([
  ['the embedded store', async () => ({})],
  ['the real S3 server', realS3Env],
])('review through the hub on %s', SLOW, (_name, storeEnv) => {
  it('--actor binds a token, --review queue is stricter than the notebook, approve publishes', async () => {
    const env = withConfigHome(sandboxEnv({ ...(await storeEnv()), SLIVINGDOC_ACTOR: 'ann' }));
    const person = join(realpathSync(env.HOME!), 'person');
    expect(runBin(['pull', person], env).status).toBe(0);
    const bot = addToken(env, 'bot');
    const intern = addToken(env, 'intern', '--review', 'queue');
    const free = addToken(env, 'free');
    const hubEnv = { ...env };
    delete hubEnv.SLIVINGDOC_ACTOR; // each token's name is its sessions' actor
    const hub = await HubProcess.start([], hubEnv);
    hubs.push(hub);
    expect(runBin(['review', 'set', 'queue', '--actor', 'bot'], env).status).toBe(0);

    const sessions = {
      bot: await hub.connect(bot),
      intern: await hub.connect(intern),
      free: await hub.connect(free),
    };
    expect(sessions.bot.instructions).toContain('Review applies');
    expect(sessions.intern.instructions).toContain('Review applies');
    expect(sessions.free.instructions).not.toContain('Review applies');
    const outcomes: Record<string, unknown> = {};
    for (const [name, session] of Object.entries(sessions)) {
      expect((await session.call('notes_pull', {})).structured).toMatchObject({ code: 'OK' });
      writeFileSync(join(session.notebookDir, `${name}.md`), `${name}\n`);
      outcomes[name] = (await session.call('notes_commit', { message: name })).structured.status;
    }
    expect(outcomes).toEqual({ bot: 'pending', intern: 'pending', free: undefined });

    const listed = JSON.parse(runBin(['proposals', 'list', '--json'], env).stdout);
    expect(listed.map((p: { actor: string }) => p.actor).sort()).toEqual(['bot', 'intern']);
    const botId = listed.find((p: { actor: string }) => p.actor === 'bot').id;
    expect(runBin(['pull', person], env).status).toBe(0);
    const approved = runBin(['proposals', 'approve', botId, person], env);
    expect(approved.status).toBe(0);
    const log = JSON.parse(runBin(['log', person, '--json', '--full'], env).stdout);
    expect(log.publications[0]).toMatchObject({ actor: 'bot' });
    // The text report: the commit-like OK line, the decision, and that the directory waits
    // for its next pull.
    const [okLine] = approved.stdout.split('\n');
    const generation = /^OK {2}generation (\d+) {2}(.+)$/.exec(okLine!);
    expect(generation?.[2]).toBe(person);
    expect(approved.stdout).toContain(
      `approved ${botId} revision 1 by ann: published as generation ${generation?.[1]}, authored by bot\n`,
    );
    expect(approved.stdout).toContain(
      'this directory is unchanged: slivingdoc pull brings the approved files in\n',
    );
    expect(log.publications[0].message).toContain('Approved-by: ann');
    const told = await sessions.bot.call('notes_pull', {});
    expect(told.structured.proposalOutcome).toMatchObject({ status: 'approved', by: 'ann' });

    // Reject: nothing published, the bytes kept, the session told with the reason.
    const internId = listed.find((p: { actor: string }) => p.actor === 'intern').id;
    expect(runBin(['proposals', 'reject', internId, '--reason', 'not yet'], env).status).toBe(0);
    const rejected = await sessions.intern.call('notes_pull', {});
    expect(rejected.structured.proposalOutcome).toMatchObject({ status: 'rejected' });
    expect(rejected.text).toContain('not yet');
    expect(JSON.parse(runBin(['proposals', 'show', internId, '--json'], env).stdout)).toMatchObject(
      { state: 'rejected', files: ['intern.md'] },
    );

    // --paths, set while the hub runs: the free token's commits touching decisions/ are now
    // queued (whole), the others still publish at once.
    expect(runBin(['review', 'set', 'queue', '--paths', 'decisions'], env).status).toBe(0);
    writeFileSync(join(sessions.free.notebookDir, 'scratch.md'), 'scratch\n');
    const direct = await sessions.free.call('notes_commit', { message: 'scratch' });
    expect(direct.structured.status).toBeUndefined();
    mkdirSync(join(sessions.free.notebookDir, 'decisions'));
    writeFileSync(join(sessions.free.notebookDir, 'decisions', 'd.md'), 'd\n');
    writeFileSync(join(sessions.free.notebookDir, 'scratch.md'), 'scratch 2\n');
    const queued = await sessions.free.call('notes_commit', { message: 'decide' });
    expect(queued.structured.status).toBe('pending');
    const shown = JSON.parse(
      runBin(['proposals', 'show', String(queued.structured.proposalId), '--json'], env).stdout,
    );
    expect(shown.files).toEqual(['decisions/d.md', 'scratch.md']);
  });
});

describe('review: reviewer tokens at /mcp', () => {
  it('a --reviewer token is refused at /mcp (403); token list shows it', async () => {
    const env = withConfigHome(sandboxEnv());
    const reviewer = addToken(env, 'ann', '--reviewer');
    expect(runBin(['token', 'list'], env).stdout).toContain('ann\treviewer');
    const looser = runBin(['token', 'add', 'x', '--review', 'direct'], env);
    expect(looser.status).toBe(2);
    const hub = await HubProcess.start([], env);
    hubs.push(hub);
    const refused = await rawRequest(hub.url, {
      headers: mcpHeaders(hub.url, reviewer),
      body: INITIALIZE,
    });
    expect(refused.status).toBe(403);
  });
});
