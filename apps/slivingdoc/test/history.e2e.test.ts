/**
 * status, log and revert end to end through the built bin, on the embedded store and on the
 * real S3 server: two people on the CLI (`--actor`) and two agents through `serve` (the MCP SDK
 * client, each with its own clientInfo.name), across checkpoint boundaries.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { FAILPOINT_RESUME_SIGNAL } from '@slivingdoc/engine';
import type { ProvidedS3 } from '@slivingdoc/testkit/rgw-global-setup';
import { untilCatching } from '@slivingdoc/testkit/signal-wait';
import { until } from '@slivingdoc/testkit/until';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, type BinRun, bin, runBin, sandboxEnv } from './helpers/bin';
import { McpServerProcess } from './helpers/mcp-server';

beforeAll(assertBuilt);

/** Every output of every run, scanned at the end of each test for ids, keys and private paths. */
let outputs: string[] = [];
let privateRoots: string[] = [];
let secrets: string[] = [];
const servers: McpServerProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close().catch(() => {});
  for (const text of outputs) {
    expect(text).not.toMatch(/[0-9a-f]{40}/);
    expect(text).not.toMatch(/packs\/|\.pack\b|probe\//);
    for (const root of privateRoots) expect(text).not.toContain(root);
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
  outputs = [];
  privateRoots = [];
});

function run(args: string[], env: NodeJS.ProcessEnv): BinRun {
  const result = runBin(args, env);
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** Runs and expects exit 0 with nothing on stderr. */
function ok(args: string[], env: NodeJS.ProcessEnv): string {
  const result = run(args, env);
  expect(result, JSON.stringify(result)).toMatchObject({ status: 0, stderr: '' });
  return result.stdout;
}

function json(args: string[], env: NodeJS.ProcessEnv): Record<string, unknown> {
  const stdout = ok([...args, '--json'], env);
  expect(stdout.endsWith('\n') && stdout.indexOf('\n') === stdout.length - 1).toBe(true);
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Every file under `dir` with its size and modification time (for "nothing written"). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, rel: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      const name = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path, name);
      else {
        const info = statSync(path);
        out[name] = `${info.size}:${info.mtimeMs}`;
      }
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return out;
}

/** The state.json files of the private root (one per directory and store). */
function stateFiles(privateRoot: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name] of Object.entries(tree(privateRoot))) {
    if (name.endsWith('state.json')) out[name] = readFileSync(join(privateRoot, name), 'utf8');
  }
  return out;
}

type StoreKind = 'embedded' | 's3';

let bucket: string | undefined;
let s3Base: NodeJS.ProcessEnv = {};

async function s3Env(): Promise<NodeJS.ProcessEnv> {
  const s3: ProvidedS3 = inject('s3');
  if ('error' in s3) throw new Error(`the real S3 server did not start:\n${s3.error}`);
  const endpoint = s3.env.SLIVINGDOC_TEST_S3_ENDPOINT;
  expect(['127.0.0.1', 'localhost', '[::1]']).toContain(new URL(endpoint).hostname);
  const credentials = {
    accessKeyId: s3.env.SLIVINGDOC_TEST_S3_ACCESS_KEY,
    secretAccessKey: s3.env.SLIVINGDOC_TEST_S3_SECRET_KEY,
  };
  secrets = [credentials.accessKeyId, credentials.secretAccessKey];
  if (bucket === undefined) {
    bucket = `history-${randomUUID()}`;
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
    });
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      client.destroy();
    }
    s3Base = {
      SLIVINGDOC_BUCKET: bucket,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
  }
  return { ...s3Base, SLIVINGDOC_PREFIX: `t-${randomUUID()}` };
}

/** A sandbox (home, caches, an embedded store or an S3 prefix of its own) and a base dir. */
async function sandbox(kind: StoreKind, extra: NodeJS.ProcessEnv = {}) {
  const env = sandboxEnv({ ...(kind === 's3' ? await s3Env() : {}), ...extra });
  const privateRoot = join(env.HOME!, 'cache', 'slivingdoc');
  privateRoots.push(privateRoot);
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'slivingdoc-test-history-')));
  return { env, base, privateRoot };
}

/** An agent: `serve` on its own directory, driven by the MCP SDK client named `name`. */
async function agent(name: string, dir: string, env: NodeJS.ProcessEnv) {
  mkdirSync(dir, { recursive: true });
  const server = await McpServerProcess.start(['--workspace-root', dir], env, name);
  servers.push(server);
  return {
    async pull() {
      const result = await server.call('notes_pull', {});
      expect(result.isError, result.text).toBe(false);
    },
    async commit(message: string) {
      const result = await server.call('notes_commit', { message });
      expect(result.isError, result.text).toBe(false);
      return result.structured.generation as number;
    },
    /** Stops the server and waits until its process is gone (a checkpoint it ran is done). */
    async stop() {
      const pid = server.pid;
      await server.close();
      servers.splice(servers.indexOf(server), 1);
      await until(() => !isAlive(pid), `the stopped server ${pid} exited`);
      outputs.push(server.stderrLines.join('\n'));
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Each test spawns dozens of processes on a shared machine; nothing here measures time. */
const SLOW = { timeout: 600_000 };

interface Publication {
  generation: number;
  time: string;
  actor: string;
  subject: string;
  message: string;
  files?: { path: string; insertions: number; deletions: number }[] | null;
}

describe.each<StoreKind>(['embedded', 's3'])('on the %s store', (kind) => {
  it(
    'status reports not pulled, clean, changed, behind and recovery pending, and writes nothing',
    SLOW,
    async () => {
      const { env, base, privateRoot } = await sandbox(kind);
      const alice = join(base, 'alice');
      const bob = join(base, 'bob');
      mkdirSync(alice);

      const never = run(['status', alice], env);
      expect(never).toMatchObject({ status: 0, stderr: '' });
      expect(never.stdout.split('\n')[0]).toBe(`not pulled  ${alice}`);
      expect(never.stdout).toContain(`  store     ${kind}  `);
      expect(json(['status', alice], env)).toMatchObject({
        path: alice,
        state: 'not-pulled',
        store: { kind },
        storeGeneration: 0,
        baselineGeneration: null,
        behind: null,
        files: [],
      });
      // A directory that does not exist is not created.
      const missing = run(['status', join(base, 'none')], env);
      expect(missing.status).toBe(1);
      expect(missing.stdout).toMatch(/^INVALID_REQUEST · NOT_PULLED\n/);
      expect(existsSync(join(base, 'none'))).toBe(false);

      ok(['pull', alice], env);
      expect(ok(['status', alice], env).split('\n')[0]).toBe(`clean  ${alice}`);

      writeFileSync(join(alice, 'a.md'), 'one\ntwo\n');
      const changed = ok(['status', alice], env);
      expect(changed).toMatch(
        new RegExp(
          `^changed  ${alice}\n(  .+\n){4}  a\\.md  \\+2\n1 file changed, 2 insertions\\(\\+\\)\n$`,
        ),
      );
      ok(['commit', alice, '-m', 'Add a', '--actor', 'alice'], env);

      ok(['pull', bob], env);
      writeFileSync(join(bob, 'b.md'), 'b\n');
      ok(['commit', bob, '-m', 'Add b', '--actor', 'bob'], env);
      writeFileSync(join(bob, 'b.md'), 'b\nbb\n');
      ok(['commit', bob, '-m', 'More b', '--actor', 'bob'], env);

      // Behind by two publications; status downloads no pack and writes nothing in P or L.
      const before = { p: tree(privateRoot), l: tree(alice) };
      const behind = ok(['status', alice], env);
      expect(behind).toContain('  accepted  generation 3\n');
      expect(behind).toContain('  baseline  generation 1 (2 publications behind)\n');
      expect(behind).toMatch(/\n {2}private {3}\d+ objects?, \d+ packs?, [\d.]+ (B|KiB|MiB)\n/);
      expect(json(['status', alice], env)).toMatchObject({
        state: 'clean',
        storeGeneration: 3,
        baselineGeneration: 1,
        behind: 2,
        filesChanged: 0,
        privateState: {
          objects: expect.any(Number),
          packs: expect.any(Number),
          bytes: expect.any(Number),
        },
      });
      expect({ p: tree(privateRoot), l: tree(alice) }).toEqual(before);

      // A pull killed while rewriting L leaves a repair pending.
      const killed = run(['pull', alice], {
        ...env,
        SLIVINGDOC_FAILPOINTS: 'mid-materialize=kill',
      });
      expect(killed.status).toBeNull();
      const pending = ok(['status', alice], env);
      expect(pending.split('\n')[0]).toBe(`recovery pending  ${alice}`);
      expect(json(['status', alice], env)).toMatchObject({ state: 'recovery-pending' });
      // status leaves the repair to the next pull, which runs it.
      ok(['pull', alice], env);
      expect(json(['status', alice], env)).toMatchObject({
        state: 'clean',
        storeGeneration: 3,
        baselineGeneration: 3,
        behind: 0,
      });
      expect(readFileSync(join(alice, 'b.md'), 'utf8')).toBe('b\nbb\n');
    },
  );

  it(
    'log and revert across checkpoint boundaries, with two people and two agents',
    SLOW,
    async () => {
      const { env, base, privateRoot } = await sandbox(kind, {
        SLIVINGDOC_CHECKPOINT_PACKS: '2',
        SLIVINGDOC_RETAINED_CHECKPOINTS: '1',
      });
      const alice = join(base, 'alice');
      const bob = join(base, 'bob');

      // 1 (alice) · 2 (claude-code) · 3 (cursor-agent) → checkpoint · 4 (alice) · 5 (claude-code)
      // → checkpoint · 6 (bob). Retained: 4–6 and the boundary checkpoint's head, 3.
      ok(['pull', alice], env);
      writeFileSync(join(alice, 'plan.md'), 'goal\nsteps\n');
      ok(['commit', alice, '-m', 'Plan', '--actor', 'alice'], env);

      const claude = await agent('claude-code', join(base, 'claude'), env);
      await claude.pull();
      writeFileSync(join(base, 'claude', 'shared.md'), 'alpha\nbeta\ngamma\n');
      expect(await claude.commit('Agent notes\n\nwritten by the agent')).toBe(2);
      await claude.stop();

      const cursor = await agent('cursor-agent', join(base, 'cursor'), env);
      await cursor.pull();
      writeFileSync(join(base, 'cursor', 'todo.md'), 'one\n');
      expect(await cursor.commit('Todo')).toBe(3);
      await cursor.stop(); // its checkpoint has run: current is at 4

      ok(['pull', alice], env);
      writeFileSync(join(alice, 'plan.md'), 'goal\nsteps\ndone\n');
      ok(['commit', alice, '-m', 'Plan done', '--actor', 'alice'], env);

      const claude2 = await agent('claude-code', join(base, 'claude'), env);
      await claude2.pull();
      writeFileSync(join(base, 'claude', 'agent.md'), 'agent says\n');
      writeFileSync(join(base, 'claude', 'shared.md'), 'alpha\nBETA by agent\ngamma\n');
      await claude2.commit('Agent rewrites beta');
      await claude2.stop();

      ok(['pull', bob], env);
      writeFileSync(join(bob, 'todo.md'), 'one\ntwo\n');
      ok(['commit', bob, '-m', 'Todo two', '--actor', 'bob'], env);

      // log works from alice's private state (behind), fetching only what it lacks, and writes
      // neither L nor the baseline.
      const before = { l: tree(alice), state: stateFiles(privateRoot) };
      const history = json(['log', alice], env) as { publications: Publication[] };
      expect(history.publications.map((p) => [p.generation, p.actor, p.subject])).toEqual([
        [6, 'bob', 'Todo two'],
        [5, 'claude-code', 'Agent rewrites beta'],
        [4, 'alice', 'Plan done'],
        [3, 'cursor-agent', 'Todo'],
      ]);
      for (const p of history.publications) {
        expect(p.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(p.files).toBeUndefined();
      }
      const text = ok(['log', alice], env).split('\n');
      expect(text[0]).toMatch(
        /^generation 6 {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}bob {2}Todo two$/,
      );
      expect(text).toHaveLength(5);
      expect(ok(['log', alice, '-n', '2'], env).trimEnd().split('\n')).toHaveLength(2);

      const stat = json(['log', alice, '--stat'], env) as { publications: Publication[] };
      expect(stat.publications.map((p) => p.files)).toEqual([
        [{ path: 'todo.md', insertions: 1, deletions: 0 }],
        [
          { path: 'agent.md', insertions: 1, deletions: 0 },
          { path: 'shared.md', insertions: 1, deletions: 1 },
        ],
        [{ path: 'plan.md', insertions: 1, deletions: 0 }],
        // The boundary: the state before the checkpoint's head is no longer retained.
        null,
      ]);
      const statText = ok(['log', alice, '--stat', '-n', '2'], env);
      expect(statText).toContain('  todo.md  +1\n  1 file changed, 1 insertion(+)\n');
      expect(statText).toContain('  shared.md  +1 -1\n');
      const full = ok(['log', alice, '--full', '-n', '4'], env);
      expect(full).toContain('claude-code\n    Agent rewrites beta\n');
      expect(full).toContain('cursor-agent\n    Todo\n');
      expect({ l: tree(alice), state: stateFiles(privateRoot) }).toEqual(before);

      // Revert of the agent's publication 5 in a clean, behind copy: agent.md goes, beta returns.
      const reverted = ok(['revert', alice, '--generation', '5', '--actor', 'alice'], env);
      expect(reverted).toMatch(new RegExp(`^OK  generation \\d+  ${alice}\n`));
      expect(existsSync(join(alice, 'agent.md'))).toBe(false);
      expect(readFileSync(join(alice, 'shared.md'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
      expect(readFileSync(join(alice, 'todo.md'), 'utf8')).toBe('one\ntwo\n'); // later work kept
      const afterRevert = (json(['log', alice, '-n', '1'], env) as { publications: Publication[] })
        .publications[0]!;
      expect(afterRevert).toMatchObject({
        generation: 7,
        actor: 'alice',
        message: 'Revert generation 5: Agent rewrites beta',
      });

      // Unpublished edits are refused and kept; a generation no longer retained is refused.
      writeFileSync(join(alice, 'plan.md'), 'edited\n');
      const refused = run(['revert', alice, '--generation', '4'], env);
      expect(refused.status).toBe(1);
      expect(refused.stdout).toMatch(/^INVALID_REQUEST · UNPUBLISHED_EDITS\n/);
      expect(refused.stdout).toContain('\naction: COMMIT_FIRST\nretryable: false\n');
      expect(readFileSync(join(alice, 'plan.md'), 'utf8')).toBe('edited\n');
      ok(['commit', alice, '-m', 'Plan edited', '--actor', 'alice'], env);
      for (const generation of ['2', '3', '99']) {
        const gone = run(['revert', alice, '--generation', generation], env);
        expect(gone.status).toBe(1);
        expect(gone.stdout).toMatch(/^INVALID_REQUEST · GENERATION_NOT_RETAINED\n/);
        expect(gone.stdout).toContain('\naction: FIX_ARGUMENTS\n');
      }

      // Bob rewrites the line alice just published (9); reverting 8 then conflicts with it:
      // markers in the copy, CONTENT_CONFLICT as for a commit; resolving and committing publishes.
      ok(['pull', bob], env);
      writeFileSync(join(bob, 'plan.md'), 'edited by bob\n');
      ok(['commit', bob, '-m', 'Plan by bob', '--actor', 'bob'], env);
      const conflict = run(['revert', alice, '--generation', '8'], env);
      expect(conflict.status).toBe(1);
      expect(conflict.stdout).toMatch(
        /^CONTENT_CONFLICT · MERGE_CONFLICT\n(.+\n)*file: plan\.md · TEXT_CONFLICT · lines \d+-\d+\n/,
      );
      expect(readFileSync(join(alice, 'plan.md'), 'utf8')).toContain('<<<<<<<');
      writeFileSync(join(alice, 'plan.md'), 'goal\nsteps\ndone\n');
      ok(['commit', alice, '-m', 'Undo plan edited', '--actor', 'alice'], env);
      const last = json(['log', alice, '-n', '3'], env) as { publications: Publication[] };
      expect(last.publications.map((p) => [p.generation, p.actor, p.subject])).toEqual([
        [10, 'alice', 'Undo plan edited'],
        [9, 'bob', 'Plan by bob'],
        [8, 'alice', 'Plan edited'],
      ]);
    },
  );

  it(
    'blame attributes every line to the publication log lists, across a checkpoint boundary',
    SLOW,
    async () => {
      const { env, base } = await sandbox(kind, {
        SLIVINGDOC_CHECKPOINT_PACKS: '2',
        SLIVINGDOC_RETAINED_CHECKPOINTS: '1',
      });
      const alice = join(base, 'alice');
      const bob = join(base, 'bob');
      const plan = join(alice, 'plan.md');
      const bobPlan = join(bob, 'plan.md');

      // alice (CLI), claude-code (MCP) and bob (CLI) write plan.md over six publications.
      ok(['pull', alice], env);
      writeFileSync(plan, 'goal\nsteps\n');
      ok(['commit', alice, '-m', 'Plan', '--actor', 'alice'], env);
      const claude = await agent('claude-code', join(base, 'claude'), env);
      await claude.pull();
      writeFileSync(join(base, 'claude', 'plan.md'), 'goal\nagent idea\nsteps\n');
      await claude.commit('Agent idea');
      await claude.stop();
      ok(['pull', bob], env);
      writeFileSync(join(bob, 'notes.md'), 'n\n');
      ok(['commit', bob, '-m', 'Notes', '--actor', 'bob'], env);
      ok(['pull', alice], env);
      writeFileSync(plan, 'goal\nagent idea\nsteps done\n');
      ok(['commit', alice, '-m', 'Steps done\n\nwith a body', '--actor', 'alice'], env);
      const claude2 = await agent('claude-code', join(base, 'claude'), env);
      await claude2.pull();
      writeFileSync(join(base, 'claude', 'plan.md'), 'goal\nagent idea\nsteps done\nagent line\n');
      await claude2.commit('Agent line');
      await claude2.stop();
      ok(['pull', bob], env);
      writeFileSync(bobPlan, 'GOAL\nagent idea\nsteps done\nagent line\n');
      ok(['commit', bob, '-m', 'Goal in capitals', '--actor', 'bob'], env);

      // The oracle: the store's own history as log lists it.
      const { publications } = json(['log', alice, '--stat', '-n', '100'], env) as {
        publications: Publication[];
      };
      const bySubject = (subject: string) => publications.find((p) => p.subject === subject)!;
      const boundary = publications.at(-1)!;
      expect(boundary.files).toBeNull(); // the checkpoint boundary: older changes are gone
      expect(publications.some((p) => p.subject === 'Agent idea')).toBe(false);
      const firstKnown = publications.at(-2)!.generation;

      const blame = json(['blame', alice, 'plan.md'], env) as {
        path: string;
        file: string;
        generation: number;
        lines: {
          line: number;
          text: string;
          publication: (Omit<Publication, 'files'> & { time: string }) | null;
          before: number | null;
        }[];
      };
      expect(blame).toMatchObject({ path: alice, file: 'plan.md' });
      expect(blame.generation).toBe(publications[0]!.generation);
      const expected = (subject: string) => {
        const p = bySubject(subject);
        return {
          generation: p.generation,
          time: p.time,
          actor: p.actor,
          subject: p.subject,
          message: p.message,
        };
      };
      expect(blame.lines).toEqual([
        { line: 1, text: 'GOAL', publication: expected('Goal in capitals'), before: null },
        // Written at generation 2, compacted by the checkpoint: older than the retained history.
        { line: 2, text: 'agent idea', publication: null, before: firstKnown },
        { line: 3, text: 'steps done', publication: expected('Steps done'), before: null },
        { line: 4, text: 'agent line', publication: expected('Agent line'), before: null },
      ]);
      expect(blame.lines[2]!.publication!.message).toBe('Steps done\n\nwith a body');
      expect(blame.lines[3]!.publication!.actor).toBe('claude-code');

      // Text: one line per line, the attribution column padded; the file may be given as a path
      // inside the directory.
      const text = ok(['blame', alice, plan], env).split('\n');
      expect(text).toHaveLength(5);
      expect(text[0]).toMatch(
        new RegExp(
          `^generation ${bySubject('Goal in capitals').generation} {2}\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC {2}bob +1 {2}GOAL$`,
        ),
      );
      expect(text[1]).toMatch(new RegExp(`^before generation ${firstKnown} +2 {2}agent idea$`));

      // A file the notebook does not hold; a directory never pulled.
      const missing = run(['blame', alice, 'none.md'], env);
      expect(missing.status).toBe(1);
      expect(missing.stdout).toMatch(/^INVALID_REQUEST · FILE_NOT_FOUND\n/);
      const never = run(['blame', join(base, 'never'), 'plan.md'], env);
      expect(never.status).toBe(1);
      expect(never.stdout).toMatch(/^INVALID_REQUEST · NOT_PULLED\n/);
      const usage = run(['blame', alice], env);
      expect(usage.status).toBe(2);
    },
  );
});

describe('actors and CLI conventions (embedded store)', () => {
  it(
    'an invalid --actor or SLIVINGDOC_ACTOR is a configuration refusal; a valid one is recorded',
    SLOW,
    async () => {
      const { env, base } = await sandbox('embedded');
      const dir = join(base, 'nb');
      for (const [args, extra] of [
        [['--actor', 'a<b>'], {}],
        [['--actor', 'x'.repeat(65)], {}],
        [['--actor', 'tab\there'], {}],
        [['--actor='], {}],
        [[], { SLIVINGDOC_ACTOR: 'bell\u0007' }],
        [[], { SLIVINGDOC_ACTOR: 'é'.repeat(33) }], // 66 bytes
      ] as const) {
        const refused = run(['pull', dir, ...args], { ...env, ...extra });
        expect(refused.status, JSON.stringify(refused)).toBe(2);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toMatch(/^slivingdoc: configuration — [^\n]+\n$/);
        expect(existsSync(dir)).toBe(false);
      }
      ok(['pull', dir], env);
      writeFileSync(join(dir, 'a.md'), 'a\n');
      ok(['commit', dir, '-m', 'by zoë'], { ...env, SLIVINGDOC_ACTOR: 'Zoë (reviewer)' });
      writeFileSync(join(dir, 'a.md'), 'a\nb\n');
      // The flag wins over the environment; without either, the OS user name.
      ok(['commit', dir, '-m', 'by flag', '--actor', 'flag-actor'], {
        ...env,
        SLIVINGDOC_ACTOR: 'env',
      });
      writeFileSync(join(dir, 'a.md'), 'a\nb\nc\n');
      ok(['commit', dir, '-m', 'by user'], { ...env, USER: 'someone' });
      const { publications } = json(['log', dir], env) as { publications: Publication[] };
      const { userInfo } = await import('node:os');
      expect(publications.map((p) => p.actor)).toEqual([
        userInfo().username,
        'flag-actor',
        'Zoë (reviewer)',
      ]);
    },
  );

  it('--quiet, EPIPE on stdout, and domain errors without log records', SLOW, async () => {
    const { env, base } = await sandbox('embedded');
    const writer = join(base, 'writer');
    ok(['pull', writer], env);
    mkdirSync(join(writer, 'notes'));
    for (let i = 0; i < 3000; i += 1) {
      writeFileSync(join(writer, 'notes', `entry-${String(i).padStart(4, '0')}.md`), `${i}\n`);
    }
    const quiet = ok(['commit', writer, '-m', 'many', '-q'], env);
    expect(quiet).toBe(`OK  generation 1  ${writer}\n3000 files changed, 3000 insertions(+)\n`);

    // The report (3,000 lines, 78 kB: more than a pipe holds) meets a reader that stops at once.
    const reader = join(base, 'reader');
    const piped = runBinShell(
      `"$NODE" "$BIN" pull "${reader}" | head -1; echo "status=\${PIPESTATUS[0]}"`,
      env,
    );
    expect(piped.stdout).toBe(`OK  generation 1  ${reader}\nstatus=0\n`);
    expect(piped.stderr).toBe('');
    expect(readdirSync(join(reader, 'notes'))).toHaveLength(3000);

    const failed = run(['commit', join(base, 'never'), '-m', 'x', '--quiet'], env);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toBe('');
    expect(failed.stdout).toMatch(/^INVALID_REQUEST · NOT_PULLED\ndiagnosticId: [0-9a-f]{16}\n$/);
  });

  it('shows progress on a terminal for a long pull, and none without one', SLOW, async () => {
    const { env, base, privateRoot } = await sandbox('embedded');
    const writer = join(base, 'writer');
    ok(['pull', writer], env);
    for (let i = 0; i < 300; i += 1) writeFileSync(join(writer, `f${i}.md`), `${i}\n`);
    ok(['commit', writer, '-m', 'files'], env);

    // The pull is held once its recovery flag is raised, for more than a second, then resumes
    // and writes its 300 files.
    // NO_COLOR: the report on the terminal is plain, so it can be matched exactly.
    const paused = { ...env, SLIVINGDOC_FAILPOINTS: 'after-recovery-flag=pause', NO_COLOR: '1' };
    const onTerminal = await heldRun(
      'script',
      [
        '-qec',
        `exec "${process.execPath}" "${binPath()}" pull "${join(base, 'tty')}"`,
        '/dev/null',
      ],
      paused,
      privateRoot,
      join(base, 'tty'),
    );
    expect(onTerminal.status).toBe(0);
    expect(onTerminal.stdout).toContain('slivingdoc: writing ');
    expect(onTerminal.stdout).toMatch(/\r\x1b\[Kslivingdoc: writing \d+ of 300 files/);
    // Cleared before the report, which follows intact.
    expect(onTerminal.stdout).toMatch(/\r\x1b\[KOK {2}generation 1 {2}/);
    expect(onTerminal.stdout).toContain('300 files changed, 300 insertions(+)');

    const piped = await heldRun(
      process.execPath,
      [binPath(), 'pull', join(base, 'pipe')],
      paused,
      privateRoot,
      join(base, 'pipe'),
    );
    expect(piped.status).toBe(0);
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toMatch(
      /^OK {2}generation 1 {2}.+\n( {2}f\d+\.md {2}\+1\n){300}300 files/,
    );
  });
});

function binPath(): string {
  return bin;
}

/** Runs a bash command line with `$BIN` the built bin (through node). */
function runBinShell(command: string, env: NodeJS.ProcessEnv): BinRun {
  const result = spawnSync('bash', ['-c', command], {
    env: { ...env, BIN: bin, NODE: process.execPath },
    encoding: 'utf8',
    timeout: 120_000,
  });
  outputs.push(result.stdout, result.stderr);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Starts `command`, waits until the pull it runs has raised its recovery flag and is held at
 * the `after-recovery-flag` pause (it catches SIGUSR2), lets more than a second pass, resumes
 * it with SIGUSR2 and collects its output.
 */
async function heldRun(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  privateRoot: string,
  dir: string,
): Promise<BinRun> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const flagged = () =>
    Object.values(stateFiles(privateRoot)).some((state) =>
      state.includes('"recoveryRequired":true'),
    );
  await until(flagged, 'the held run flagged recovery in its state record');
  // The node process is the child itself, or script's child.
  const pid = command === 'script' ? childOf(child.pid!) : child.pid!;
  // Held only once it waits for SIGUSR2 (the flag is written before), which must not come
  // earlier: it would kill the process. The sleep is a lower bound only (the run lasts more
  // than a second, so a terminal shows progress), never a verdict.
  await untilCatching(pid, FAILPOINT_RESUME_SIGNAL);
  await sleep(1200);
  process.kill(pid, FAILPOINT_RESUME_SIGNAL);
  const status = await exited;
  outputs.push(stdout, stderr);
  expect(existsSync(dir)).toBe(true);
  return { status, stdout, stderr };
}

function childOf(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  expect(children).toHaveLength(1);
  return Number(children[0]);
}
