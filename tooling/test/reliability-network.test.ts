import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FaultProxy, type FaultRule, startFaultProxy } from '@slivingdoc/testkit/fault-proxy';
import type {} from '@slivingdoc/testkit/rgw-global-setup';
import { providedS3, type S3TestEnv } from '@slivingdoc/testkit/s3-env';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type CliRun, requireBuiltCli, runCli } from '../reliability/cli';
import { type StoreSpec, withService } from '../reliability/store-spec';

// Network faults end to end (contract §9): real `slivingdoc` processes talk to the
// real S3 server through the fault proxy, which breaks exactly one kind of request. Every
// ambiguity path must end in a proven OK, or in a catalogued retryable error with L
// untouched, and never lose or duplicate a publication.

let s3: S3TestEnv;
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  await requireBuiltCli();
  s3 = providedS3(inject('s3'));
});
afterAll(() => Promise.all(proxies.map((p) => p.close())));

interface Notebook {
  dir: string;
  proxy: FaultProxy;
  run(args: string[]): Promise<CliRun>;
  witness(): Promise<string>;
}

/**
 * A fresh notebook on a fresh prefix behind its own fault proxy (cases run side by side),
 * with one acknowledged base commit. Set-up and witness reads run in this process through
 * the engine on the same endpoint, prefix and private root; only calls under test are
 * real `slivingdoc` processes.
 */
async function notebook(): Promise<Notebook> {
  const proxy = await startFaultProxy({ target: s3.endpoint });
  proxies.push(proxy);
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-net-'));
  const env = {
    HOME: join(root, 'home'),
    SLIVINGDOC_BUCKET: s3.bucket,
    SLIVINGDOC_PREFIX: `net-${randomUUID()}`,
    SLIVINGDOC_PRIVATE_ROOT: join(root, 'private'),
    SLIVINGDOC_WORKSPACE_ROOT: join(root, 'ws'),
    AWS_ENDPOINT_URL_S3: proxy.url,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_REGION: 'us-east-1',
    LOG_LEVEL: 'error',
  };
  const dir = join(root, 'ws', 'a');
  await mkdir(dir, { recursive: true });
  const run = (args: string[]) => runCli(args, env);
  const spec: StoreSpec = { kind: 's3', ...s3, endpoint: proxy.url, prefix: env.SLIVINGDOC_PREFIX };
  const engine = (notebookDir: string, op: { commit?: string }) =>
    withService(
      {
        spec,
        privateRoot: env.SLIVINGDOC_PRIVATE_ROOT,
        workspaceRoot: env.SLIVINGDOC_WORKSPACE_ROOT,
        notebookDir,
      },
      op,
    );
  const nb: Notebook = {
    dir,
    proxy,
    run,
    async witness() {
      const w = join(root, 'ws', `witness-${randomUUID()}`);
      await mkdir(w);
      await engine(w, {});
      return readFile(join(w, 'notes.md'), 'utf8');
    },
  };
  await engine(dir, {});
  await writeFile(join(dir, 'notes.md'), 'base\n');
  await engine(dir, { commit: 'base' });
  return nb;
}

/** Commits one new line under `rules`, then lifts the faults. */
async function commitUnder(nb: Notebook, rules: FaultRule[], line: string): Promise<CliRun> {
  await appendFile(join(nb.dir, 'notes.md'), `${line}\n`);
  nb.proxy.setRules(rules);
  try {
    return await nb.run(['commit', nb.dir, '-m', line]);
  } finally {
    nb.proxy.setRules([]);
    await nb.proxy.idle();
  }
}

const CAS = { method: 'PUT', key: /\/current$/ } as const;
const PACK_UPLOAD = { method: 'PUT', key: /\/packs\/increments\// } as const;

describe('network faults through the proxy (real S3 server, real processes)', () => {
  it.concurrent.each([
    ['drop-response (the CAS landed, the answer was lost)', { kind: 'drop-response' }],
    ['reset-before (the CAS never arrived)', { kind: 'reset-before' }],
    ['503 SlowDown', { kind: 'error', status: 503, code: 'SlowDown' }],
    ['503 ServiceUnavailable', { kind: 'error', status: 503, code: 'ServiceUnavailable' }],
    ['500 InternalError', { kind: 'error', status: 500, code: 'InternalError' }],
    ['a delay', { kind: 'delay', ms: 300 }],
  ] as const)(
    'an ambiguous CAS answer — %s — ends in a proven OK, published exactly once',
    async (_label, fault) => {
      const nb = await notebook();
      const line = `line-${randomUUID()}`;
      const result = await commitUnder(nb, [{ ...CAS, on: [1], fault }], line);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^OK {2}generation \d+/);
      const remote = await nb.witness();
      expect(remote.split('\n').filter((l) => l === line)).toHaveLength(1);
      expect(await readFile(join(nb.dir, 'notes.md'), 'utf8')).toBe(remote);
    },
    120_000,
  );

  it('a lost CAS answer whose verification read also fails is PUBLICATION_UNPROVEN, L untouched; a pull then shows it landed', async () => {
    const nb = await notebook();
    const line = `line-${randomUUID()}`;
    const before = `base\n${line}\n`;
    const result = await commitUnder(
      nb,
      [
        { ...CAS, on: [1], fault: { kind: 'drop-response' } },
        // Every read of `current` after the first (the verification) fails.
        {
          method: 'GET',
          key: /\/current$/,
          on: Array.from({ length: 40 }, (_, i) => i + 2),
          fault: { kind: 'reset-before' },
        },
      ],
      line,
    );
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')[0]).toBe('STORAGE_FAILURE · PUBLICATION_UNPROVEN');
    expect(result.stdout).toContain('retryable: true');
    expect(await readFile(join(nb.dir, 'notes.md'), 'utf8')).toBe(before);
    const pulled = await nb.run(['pull', nb.dir]);
    expect(pulled.code, pulled.stdout).toBe(0);
    const remote = await nb.witness();
    expect(remote.split('\n').filter((l) => l === line)).toHaveLength(1);
    expect(await readFile(join(nb.dir, 'notes.md'), 'utf8')).toBe(remote);
  }, 120_000);

  it.concurrent.each([
    ['drop-response (the pack landed, the answer was lost)', { kind: 'drop-response' }],
    ['reset-before (the pack never arrived)', { kind: 'reset-before' }],
    ['503 SlowDown', { kind: 'error', status: 503, code: 'SlowDown' }],
  ] as const)(
    'a failed pack upload — %s — never leaves a manifest without its pack',
    async (_label, fault) => {
      const nb = await notebook();
      const line = `line-${randomUUID()}`;
      const result = await commitUnder(nb, [{ ...PACK_UPLOAD, on: [1], fault }], line);
      if (result.code !== 0) {
        // A refusal is allowed only as a catalogued retryable storage failure, with L untouched.
        expect(result.stdout.split('\n')[0]).toMatch(
          /^STORAGE_FAILURE · (STORE_ERROR|STORE_UNREACHABLE)$/,
        );
        expect(result.stdout).toContain('retryable: true');
        const retried = await nb.run(['commit', nb.dir, '-m', 'retry']);
        expect(retried.code, retried.stdout).toBe(0);
      }
      const remote = await nb.witness();
      expect(remote.split('\n').filter((l) => l === line)).toHaveLength(1);
    },
    120_000,
  );

  it('every CAS attempt throttled: a catalogued retryable error, L untouched, nothing published', async () => {
    const nb = await notebook();
    const line = `line-${randomUUID()}`;
    const result = await commitUnder(
      nb,
      [{ ...CAS, fault: { kind: 'error', status: 503, code: 'SlowDown' } }],
      line,
    );
    expect(result.code).toBe(1);
    const head = result.stdout.split('\n')[0] ?? '';
    expect(head).toMatch(
      /^(REMOTE_BUSY · RETRIES_EXHAUSTED|STORAGE_FAILURE · (STORE_ERROR|PUBLICATION_UNPROVEN))$/,
    );
    expect(result.stdout).toContain('retryable: true');
    expect(await readFile(join(nb.dir, 'notes.md'), 'utf8')).toBe(`base\n${line}\n`);
    expect((await nb.witness()).includes(line)).toBe(false);
  }, 180_000);
});
