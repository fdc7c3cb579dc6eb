/**
 * Members of a shared bucket (docs/configuration.md, contract §7 "Readers"), end to end through
 * the built bin on the real S3 server: two more users of the RGW, a reader and a writer of one
 * prefix, hold exactly the bucket policies docs/configuration.md shows (read from it). The
 * reader's and the writer's requests pass through fault proxies that only count them.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import {
  type FaultProxy,
  type ProxyRecord,
  startFaultProxy,
} from '@slivingdoc/testkit/fault-proxy';
import type { S3TestEnv } from '@slivingdoc/testkit/rgw-server';
import {
  createRgwUser,
  putBucketPolicy,
  putUserPolicy,
  type RgwUser,
} from '@slivingdoc/testkit/rgw-users';
import { freshBucket, requireS3 } from '@slivingdoc/testkit/s3-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, type BinRun, bin, runBinAsync, sandboxEnv } from './helpers/bin';
import { addToken, HubProcess, withConfigHome } from './helpers/http-hub';
import { expectEnvelope, McpServerProcess } from './helpers/mcp-server';
import { bucketPolicyOf, documentedPolicy } from './helpers/members';

const PREFIX_A = 'team/notebook-a';
const PREFIX_B = 'team/notebook-b';
const STORE_SENTENCE =
  'This server’s store credentials can only read: notes_commit is refused with READ_ONLY_SESSION and changes nothing; notes_pull works.';
const TOKEN_SENTENCE =
  'This session’s token is read-only: notes_commit is refused with READ_ONLY_SESSION and changes nothing; notes_pull works.';
/** Each test runs a dozen processes one after another: bounded generously for a loaded machine. */
const SLOW = { timeout: 300_000 };
const READER_RECORD =
  'the store credentials can only read: running as a reader, commits and reverts are refused until restart';

let s3: S3TestEnv;
let bucket: string;
let reader: RgwUser;
let writer: RgwUser;
let readerProxy: FaultProxy;
let writerProxy: FaultProxy;
/** The writer's own notebook directory (its CLI commits). */
let writerDir: string;
let writerEnv: NodeJS.ProcessEnv;
const stdios: McpServerProcess[] = [];
const hubs: HubProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  // The SDK's notice about its future Node support is noise in a test run.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  s3 = requireS3();
  bucket = await freshBucket(s3);
  [reader, writer] = await Promise.all([createRgwUser(s3, 'reader'), createRgwUser(s3, 'writer')]);
  await putBucketPolicy(s3, bucket, membersPolicy('writer'));
  readerProxy = await startFaultProxy({ target: s3.SLIVINGDOC_TEST_S3_ENDPOINT });
  writerProxy = await startFaultProxy({ target: s3.SLIVINGDOC_TEST_S3_ENDPOINT });
  writerEnv = memberEnv(writer, writerProxy, PREFIX_A, {
    SLIVINGDOC_CHECKPOINT_PACKS: '2',
    LOG_LEVEL: 'warn',
  });
  writerDir = join(writerEnv.HOME!, 'notebook');
});

afterEach(async () => {
  for (const server of stdios.splice(0)) await server.close().catch(() => undefined);
  for (const hub of hubs.splice(0)) await hub.stop('SIGKILL');
});

afterAll(async () => {
  await readerProxy?.close();
  await writerProxy?.close();
});

/**
 * The bucket policy of the two members, from docs/configuration.md: the reader of prefix A
 * holds the reader policy; the writer holds the writer policy, or the reader's once its write
 * access is taken away.
 */
function membersPolicy(writerHolds: 'writer' | 'reader') {
  const at = { bucket, prefix: PREFIX_A };
  return bucketPolicyOf([
    documentedPolicy('reader-bucket-policy', { ...at, memberArn: reader.arn }),
    documentedPolicy(`${writerHolds}-bucket-policy`, { ...at, memberArn: writer.arn }),
  ]);
}

/** A sandbox whose S3 requests go through `proxy` with `user`'s credentials. */
function memberEnv(
  user: { accessKeyId: string; secretAccessKey: string },
  proxy: FaultProxy | undefined,
  prefix: string,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return withConfigHome(
    sandboxEnv({
      SLIVINGDOC_BUCKET: bucket,
      SLIVINGDOC_PREFIX: prefix,
      AWS_ENDPOINT_URL_S3: proxy?.url ?? s3.SLIVINGDOC_TEST_S3_ENDPOINT,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: user.accessKeyId,
      AWS_SECRET_ACCESS_KEY: user.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...extra,
    }),
  );
}

const owner = () => ({
  accessKeyId: s3.SLIVINGDOC_TEST_S3_ACCESS_KEY,
  secretAccessKey: s3.SLIVINGDOC_TEST_S3_SECRET_KEY,
});

/** Runs the bin and expects exit 0 with nothing on stderr; returns stdout. */
async function ok(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const result = await runBinAsync(args, env);
  expect(result, JSON.stringify(result)).toMatchObject({ status: 0, stderr: '' });
  return result.stdout;
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<BinRun> {
  return runBinAsync(args, env);
}

/** Every file below `dir` (not its dot-directories), path → bytes. */
function filesOf(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files.set(path, readFileSync(join(dir, path), 'latin1'));
    }
  };
  walk('');
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** A JSON report without its `path` (the directories differ, the notebook does not). */
function withoutPath(json: string): unknown {
  const { path: _path, ...rest } = JSON.parse(json) as Record<string, unknown>;
  return rest;
}

/** The records of `proxy` from index `from` on that could change the store. */
function writesSince(proxy: FaultProxy, from: number): ProxyRecord[] {
  return proxy.records.slice(from).filter((r) => r.method !== 'GET' && r.method !== 'HEAD');
}

/**
 * A reader process's writes: each is its probe's first create-if-absent, refused 403, and
 * there is exactly one per process that probed.
 */
function expectOnlyRefusedProbes(proxy: FaultProxy, from: number, processes: number): void {
  const writes = writesSince(proxy, from);
  for (const write of writes)
    expect(write).toMatchObject({
      method: 'PUT',
      key: expect.stringMatching(new RegExp(`^${PREFIX_A}/probe/[0-9a-f-]{36}$`)),
      upstreamStatus: 403,
    });
  expect(writes).toHaveLength(processes);
}

/**
 * The notebook of prefix A as its reader sees it behind the product's back: `current` and every
 * pack key. (Not as the bucket's owner: on the RGW an object belongs to the user who wrote it,
 * and the owner, whom no statement names, may not read the writer's objects.)
 */
async function storeContents(prefix: string) {
  const client = new S3Client({
    endpoint: s3.SLIVINGDOC_TEST_S3_ENDPOINT,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: reader.accessKeyId, secretAccessKey: reader.secretAccessKey },
  });
  try {
    const current = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: `${prefix}/current` }),
    );
    const manifest = JSON.parse(await current.Body!.transformToString()) as Manifest;
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/packs/` }),
    );
    return {
      manifest,
      packs: (listed.Contents ?? []).map((item) => item.Key!.slice(prefix.length + 1)),
    };
  } finally {
    client.destroy();
  }
}

interface Chain {
  checkpoint: { key: string; throughGeneration: number };
  increments: { key: string }[];
}
interface Manifest extends Chain {
  generation: number;
  retained: Chain[];
}

const chainKeys = (chain: Chain) => [chain.checkpoint.key, ...chain.increments.map((i) => i.key)];

async function startView(env: NodeJS.ProcessEnv) {
  const view = spawn(process.execPath, [bin, 'view', '--listen', '127.0.0.1:0'], { env });
  const stderr: string[] = [];
  view.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exited = new Promise((resolve) => view.once('exit', resolve));
  const loginUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    view.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(out.split('\n')[0] as string);
    });
    view.once('exit', (code) => reject(new Error(`view exited ${code}: ${stderr.join('')}`)));
  });
  return {
    loginUrl,
    stderr,
    stop: async () => {
      view.kill('SIGTERM');
      await exited;
    },
  };
}

describe('members of a shared bucket, on the real S3 server, with the documented policies', () => {
  it(
    'before anyone published, the reader pulls the empty notebook (ListBucket turns the absent current into a 404)',
    SLOW,
    async () => {
      const env = memberEnv(reader, readerProxy, PREFIX_A);
      const dir = join(env.HOME!, 'early');
      const from = readerProxy.records.length;
      expect(await ok(['pull', dir], env)).toMatch(/^OK {2}generation 0 {2}/);
      expect(filesOf(dir).size).toBe(0);
      expectOnlyRefusedProbes(readerProxy, from, 1);
      // The GETs of the absent `current` were answered 404, not 403.
      const reads = readerProxy.records.slice(from).filter((r) => r.key === `${PREFIX_A}/current`);
      expect(reads.length).toBeGreaterThan(0);
      for (const read of reads) expect(read.upstreamStatus).toBe(404);
    },
  );

  it(
    'the writer, holding exactly the writer policy, commits many times, checkpoints, cleans up and reverts without one AccessDenied',
    SLOW,
    async () => {
      await ok(['pull', writerDir], writerEnv);
      // Incompressible text: the first publication's pack is over the 8 MiB multipart
      // threshold. The next commit deletes it, so later checkpoints (and readers) stay small.
      const lines = randomBytes(9 * 1024 * 1024)
        .toString('base64')
        .match(/.{1,76}/g)!;
      writeFileSync(join(writerDir, 'large.txt'), `${lines.join('\n')}\n`);
      for (let n = 1; n <= 6; n += 1) {
        if (n === 2) rmSync(join(writerDir, 'large.txt'));
        mkdirSync(join(writerDir, 'notes'), { recursive: true });
        writeFileSync(
          join(writerDir, 'notes', `day-${n}.md`),
          `# Day ${n}\n\nwritten by the writer\n`,
        );
        writeFileSync(join(writerDir, 'plan.md'), `# Plan\n\nstep ${n}\n`);
        await ok(['commit', writerDir, '-m', `day ${n}`], writerEnv);
      }
      const log = JSON.parse(await ok(['log', writerDir, '--json'], writerEnv)) as {
        publications: { generation: number; subject: string }[];
      };
      const latest = log.publications[0]!;
      expect(latest.subject).toBe('day 6');
      await ok(['revert', writerDir, '--generation', String(latest.generation)], writerEnv);
      expect(readFileSync(join(writerDir, 'plan.md'), 'utf8')).toBe('# Plan\n\nstep 5\n');

      // The large pack went up in parts (CreateMultipartUpload is a POST with `uploads`).
      expect(writerProxy.records.some((r) => r.method === 'POST' && /^uploads/.test(r.query))).toBe(
        true,
      );
      // Not one request of the writer was refused.
      expect(writerProxy.records.filter((r) => r.upstreamStatus === 403)).toEqual([]);
      const { manifest, packs } = await storeContents(PREFIX_A);
      // Checkpoints ran (the active one compacts more than the first publication) ...
      expect(manifest.checkpoint.throughGeneration).toBeGreaterThan(1);
      // ... and cleanup deleted every pack no chain references any more.
      const referenced = new Set([manifest, ...manifest.retained].flatMap(chainKeys));
      expect(packs.filter((key) => !referenced.has(key))).toEqual([]);
      const uploaded = new Set(
        writerProxy.records
          .filter((r) => r.method === 'PUT' && /\/packs\//.test(r.key))
          .map((r) => r.key),
      );
      expect(uploaded.size).toBeGreaterThan(packs.length);
    },
  );

  it(
    'the reader pulls, reports status, log and blame of generation N byte for byte, and sends no write after its probe',
    SLOW,
    async () => {
      const env = memberEnv(reader, readerProxy, PREFIX_A);
      const dir = join(env.HOME!, 'notebook');
      const from = readerProxy.records.length;
      await ok(['pull', dir], env);
      expect(filesOf(dir)).toEqual(filesOf(writerDir));
      const status = JSON.parse(await ok(['status', dir, '--json'], env)) as Record<
        string,
        unknown
      >;
      const writerStatus = JSON.parse(await ok(['status', writerDir, '--json'], writerEnv));
      expect(status).toMatchObject({
        storeGeneration: writerStatus.storeGeneration,
        baselineGeneration: writerStatus.storeGeneration,
      });
      // (Without --stat: a directory pulled afresh lacks the states before its checkpoint that
      // the writer's own directory still holds, so their diffstats may differ; the history may not.)
      expect(withoutPath(await ok(['log', dir, '--json'], env))).toEqual(
        withoutPath(await ok(['log', writerDir, '--json'], writerEnv)),
      );
      expect(withoutPath(await ok(['blame', dir, 'plan.md', '--json'], env))).toEqual(
        withoutPath(await ok(['blame', writerDir, 'plan.md', '--json'], writerEnv)),
      );
      // pull probed (one refused create); status, log and blame skip the probe.
      expectOnlyRefusedProbes(readerProxy, from, 1);
    },
  );

  it(
    'the reader serves notes_pull over stdio and HTTP and the view, and refuses every commit',
    SLOW,
    async () => {
      const env = memberEnv(reader, readerProxy, PREFIX_A);
      const from = readerProxy.records.length;
      const expected = filesOf(writerDir);

      const stdio = await McpServerProcess.start([], env, 'reader-agent');
      stdios.push(stdio);
      expect(stdio.client.getInstructions()).toMatch(new RegExp(`${STORE_SENTENCE}$`));
      const { tools } = await stdio.client.listTools();
      expect(tools.find((t) => t.name === 'notes_commit')?.description).toMatch(
        new RegExp(`${STORE_SENTENCE}$`),
      );
      const pulled = await stdio.call('notes_pull', {});
      expect(pulled.isError).toBe(false);
      expect(filesOf(stdio.notebookDir)).toEqual(expected);
      writeFileSync(join(stdio.notebookDir, 'plan.md'), 'an agent’s edit\n');
      expectEnvelope(await stdio.call('notes_commit', { message: 'm' }), {
        code: 'READ_ONLY_SESSION',
        reason: 'STORE_READ_ONLY',
      });
      expect(readFileSync(join(stdio.notebookDir, 'plan.md'), 'utf8')).toBe('an agent’s edit\n');
      await stdio.close();
      expect(stdio.stderrLines.filter((line) => line.includes(READER_RECORD))).toHaveLength(1);

      const writeToken = addToken(env, 'reader-agent');
      const readOnlyToken = addToken(env, 'reader-bot', '--read-only');
      const hub = await HubProcess.start([], env);
      hubs.push(hub);
      const records = hub.logged(READER_RECORD);
      expect(records).toEqual([expect.objectContaining({ level: 'info', readOnly: true })]);
      const session = await hub.connect(writeToken);
      expect(session.instructions).toMatch(new RegExp(`${STORE_SENTENCE}$`));
      expect((await session.call('notes_pull', {})).isError).toBe(false);
      expect(filesOf(session.notebookDir)).toEqual(expected);
      writeFileSync(join(session.notebookDir, 'plan.md'), 'a session’s edit\n');
      const refused = await session.call('notes_commit', { message: 'm' });
      expect(refused.structured).toMatchObject({
        code: 'READ_ONLY_SESSION',
        reason: 'STORE_READ_ONLY',
        action: 'ASK_FOR_STORE_WRITE_ACCESS',
        retryable: false,
      });
      expect(readFileSync(join(session.notebookDir, 'plan.md'), 'utf8')).toBe('a session’s edit\n');
      // A read-only token says so for its token, as on a writer's hub.
      const bot = await hub.connect(readOnlyToken);
      expect(bot.instructions).toMatch(new RegExp(`${TOKEN_SENTENCE}$`));
      await session.close();
      await bot.close();
      // The web view beside /mcp reads as usual and offers no revert.
      const login = await fetch(`${hub.url.replace(/\/mcp$/, '')}/history?token=${writeToken}`, {
        redirect: 'manual',
      });
      expect(login.status).toBe(303);
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const base = hub.url.replace(/\/mcp$/, '');
      const generation = (await (
        await fetch(`${base}/api/generation`, { headers: { cookie } })
      ).json()) as {
        generation: number;
      };
      const page = await (
        await fetch(`${base}/publications/${generation.generation}`, { headers: { cookie } })
      ).text();
      expect(page).toContain('plan.md');
      expect(page).not.toContain('/revert');
      await hub.stop();

      const view = await startView(env);
      try {
        const viewLogin = await fetch(view.loginUrl, { redirect: 'manual' });
        expect(viewLogin.status).toBe(303);
        const viewCookie = (viewLogin.headers.get('set-cookie') ?? '').split(';')[0] as string;
        const origin = new URL(view.loginUrl).origin;
        const file = await (
          await fetch(`${origin}/files/notes/day-3.md`, { headers: { cookie: viewCookie } })
        ).text();
        expect(file).toContain('written by the writer');
        const detail = await (
          await fetch(`${origin}/publications/${generation.generation}`, {
            headers: { cookie: viewCookie },
          })
        ).text();
        expect(detail).toContain('plan.md');
        expect(detail).not.toContain('/revert');
      } finally {
        await view.stop();
      }
      expect(
        view.stderr
          .join('')
          .split('\n')
          .filter((line) => line.includes(READER_RECORD)),
      ).toHaveLength(1);
      // serve over stdio, serve --listen and view each probed once; nothing else was written.
      expectOnlyRefusedProbes(readerProxy, from, 3);
    },
  );

  it(
    "the reader's commit and revert are refused before anything changes; L and P stay intact and the next pull works",
    SLOW,
    async () => {
      const env = memberEnv(reader, readerProxy, PREFIX_A);
      const dir = join(env.HOME!, 'notebook');
      await ok(['pull', dir], env);
      writeFileSync(join(dir, 'notes', 'mine.md'), 'the reader’s own note\n');
      const from = readerProxy.records.length;
      const before = await storeContents(PREFIX_A);
      for (const args of [
        ['commit', dir, '-m', 'from the reader'],
        ['revert', dir, '--generation', '1'],
      ]) {
        const refused = await run(args, env);
        expect(refused.status, JSON.stringify(refused)).toBe(1);
        expect(refused.stdout).toContain('READ_ONLY_SESSION · STORE_READ_ONLY');
        expect(refused.stdout).toContain('action: ASK_FOR_STORE_WRITE_ACCESS');
      }
      expectOnlyRefusedProbes(readerProxy, from, 2);
      expect(await storeContents(PREFIX_A)).toEqual(before);
      expect(readFileSync(join(dir, 'notes', 'mine.md'), 'utf8')).toBe('the reader’s own note\n');
      const status = JSON.parse(await ok(['status', dir, '--json'], env)) as {
        state: string;
        files: { path: string }[];
      };
      expect(status.state).toBe('changed');
      expect(status.files.map((c) => c.path)).toEqual(['notes/mine.md']);

      writeFileSync(join(writerDir, 'notes', 'after.md'), 'published after the refusal\n');
      await ok(['commit', writerDir, '-m', 'after'], writerEnv);
      await ok(['pull', dir], env);
      expect(readFileSync(join(dir, 'notes', 'after.md'), 'utf8')).toBe(
        'published after the refusal\n',
      );
      expect(readFileSync(join(dir, 'notes', 'mine.md'), 'utf8')).toBe('the reader’s own note\n');
    },
  );

  it(
    'members holding only the documented IAM policies: the writer publishes, the reader reads it and is refused its commit',
    SLOW,
    async () => {
      const [admin, iamReader, iamWriter] = await Promise.all([
        createRgwUser(s3, 'policy-admin', 'user-policy=*'),
        createRgwUser(s3, 'iam-reader'),
        createRgwUser(s3, 'iam-writer'),
      ]);
      const at = { bucket, prefix: PREFIX_A };
      await putUserPolicy(
        s3,
        admin,
        iamReader,
        'reader',
        documentedPolicy('reader-iam-policy', at),
      );
      await putUserPolicy(
        s3,
        admin,
        iamWriter,
        'writer',
        documentedPolicy('writer-iam-policy', at),
      );

      const proxy = await startFaultProxy({ target: s3.SLIVINGDOC_TEST_S3_ENDPOINT });
      try {
        const writing = memberEnv(iamWriter, proxy, PREFIX_A);
        const dir = join(writing.HOME!, 'notebook');
        await ok(['pull', dir], writing);
        mkdirSync(join(dir, 'notes'), { recursive: true });
        writeFileSync(join(dir, 'notes', 'iam.md'), 'published under an IAM policy\n');
        await ok(['commit', dir, '-m', 'iam'], writing);
        expect(proxy.records.filter((r) => r.upstreamStatus === 403)).toEqual([]);
      } finally {
        await proxy.close();
      }
      const reading = memberEnv(iamReader, undefined, PREFIX_A);
      const dir = join(reading.HOME!, 'notebook');
      await ok(['pull', dir], reading);
      expect(readFileSync(join(dir, 'notes', 'iam.md'), 'utf8')).toBe(
        'published under an IAM policy\n',
      );
      writeFileSync(join(dir, 'notes', 'iam.md'), 'edited by the IAM reader\n');
      const refused = await run(['commit', dir, '-m', 'no'], reading);
      expect(refused.status).toBe(1);
      expect(refused.stdout).toContain('READ_ONLY_SESSION · STORE_READ_ONLY');
    },
  );

  it(
    'a member of prefix A pointed at prefix B gets a clear refusal, not INCOMPATIBLE_STORE',
    SLOW,
    async () => {
      const ownerEnv = memberEnv(owner(), undefined, PREFIX_B);
      const ownerDir = join(ownerEnv.HOME!, 'b');
      await ok(['pull', ownerDir], ownerEnv);
      writeFileSync(join(ownerDir, 'secret.md'), 'only for members of B\n');
      await ok(['commit', ownerDir, '-m', 'b'], ownerEnv);

      for (const user of [reader, writer]) {
        const env = memberEnv(user, undefined, PREFIX_B);
        const dir = join(env.HOME!, 'b');
        const refused = await run(['pull', dir], env);
        expect(refused.status, JSON.stringify(refused)).toBe(2);
        expect(refused.stdout).toBe('');
        expect(refused.stderr).toMatch(
          /^slivingdoc: startup — the store's credentials may neither write nor read this prefix: create-if-absent: access-denied \(AccessDenied\); read current: access-denied \(AccessDenied\)\n$/,
        );
        expect(refused.stderr).not.toContain('INCOMPATIBLE_STORE');
      }
    },
  );

  it(
    "the writer whose policy is replaced by the reader's mid-run: its next commit is refused cleanly and everything acknowledged is in the store",
    SLOW,
    async () => {
      const env = memberEnv(writer, undefined, PREFIX_A);
      const server = await McpServerProcess.start([], env, 'writer-agent');
      stdios.push(server);
      expect(server.client.getInstructions()).not.toContain('notes_commit is refused');
      expect((await server.call('notes_pull', {})).isError).toBe(false);
      const acknowledged: string[] = [];
      for (let n = 1; n <= 3; n += 1) {
        const text = `acknowledged ${n}\n`;
        writeFileSync(join(server.notebookDir, `ack-${n}.md`), text);
        const done = await server.call('notes_commit', { message: `ack ${n}` });
        expect(done.isError, done.text).toBe(false);
        acknowledged.push(text);
      }

      await putBucketPolicy(s3, bucket, membersPolicy('reader'));
      writeFileSync(join(server.notebookDir, 'late.md'), 'written after the policy changed\n');
      expectEnvelope(await server.call('notes_commit', { message: 'late' }), {
        code: 'STORAGE_FAILURE',
        reason: 'ACCESS_DENIED',
      });
      expect(readFileSync(join(server.notebookDir, 'late.md'), 'utf8')).toBe(
        'written after the policy changed\n',
      );
      // Pulls still work for it; the refused edit stays unpublished in its directory.
      expect((await server.call('notes_pull', {})).isError).toBe(false);
      expect(readFileSync(join(server.notebookDir, 'late.md'), 'utf8')).toBe(
        'written after the policy changed\n',
      );

      // Everything acknowledged is in the store, as a fresh pull of the reader finds it; the
      // refused edit is not.
      const readerEnv = memberEnv(reader, undefined, PREFIX_A);
      const readerDir = join(readerEnv.HOME!, 'a');
      await ok(['pull', readerDir], readerEnv);
      for (const [n, text] of acknowledged.entries())
        expect(readFileSync(join(readerDir, `ack-${n + 1}.md`), 'utf8')).toBe(text);
      expect(filesOf(readerDir).has('late.md')).toBe(false);

      // Restarted, the same credentials run as a reader.
      await server.close();
      const restarted = await McpServerProcess.start([], env, 'writer-agent');
      stdios.push(restarted);
      expect(restarted.client.getInstructions()).toMatch(new RegExp(`${STORE_SENTENCE}$`));
      // It stays a reader until restarted, even once write access is given back.
      await putBucketPolicy(s3, bucket, membersPolicy('writer'));
      expect((await restarted.call('notes_pull', {})).isError).toBe(false);
      writeFileSync(join(restarted.notebookDir, 'later.md'), 'after write access came back\n');
      expectEnvelope(await restarted.call('notes_commit', { message: 'later' }), {
        code: 'READ_ONLY_SESSION',
        reason: 'STORE_READ_ONLY',
      });
    },
  );
});
