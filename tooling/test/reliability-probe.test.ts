import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createS3Store, runProbe } from '@slivingdoc/store';
import { type FaultProxy, type FaultRule, startFaultProxy } from '@slivingdoc/testkit/fault-proxy';
import type {} from '@slivingdoc/testkit/rgw-global-setup';
import { providedS3, type S3TestEnv } from '@slivingdoc/testkit/s3-env';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { requireBuiltCli, runCli } from '../reliability/cli';

// The startup compatibility probe (contract §7) against the real S3 server
// behind the fault proxy: one transient fault at any step must not turn into
// INCOMPATIBLE_STORE, and no probe key may be left behind.

let s3: S3TestEnv;
let proxy: FaultProxy;
let direct: S3Client;

beforeAll(async () => {
  s3 = providedS3(inject('s3'));
  proxy = await startFaultProxy({ target: s3.endpoint });
  direct = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
});
afterAll(async () => {
  await proxy?.close();
  direct?.destroy();
});

/** Every key under `prefix`, read directly from the server (not through the proxy). */
async function keysUnder(prefix: string): Promise<string[]> {
  const out = await direct.send(
    new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/` }),
  );
  return (out.Contents ?? []).map((o) => o.Key ?? '');
}

function storeThroughProxy(prefix: string) {
  return createS3Store({
    bucket: s3.bucket,
    prefix,
    endpoint: proxy.url,
    region: 'us-east-1',
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
}

const PROBE = /\/probe\//;
const noWait = { sleep: async () => undefined };

describe('compatibility probe through the fault proxy, on the real S3 server', () => {
  // The probe's PUTs, in order: create, second create, wrong-ETag replace, right-ETag replace
  // (rgw honours the bare form, which the store starts with after the first probe; a fresh
  // store starts quoted, so the first form adds a refused replace pair: PUTs 3-4 quoted,
  // 5-6 bare). Its GETs: read back, read after each wrong replace, read after the replace;
  // reads go through the SDK's retrying client (3 tries), conditional writes are sent once.
  const cases: [string, FaultRule][] = [
    [
      'a reset before the first create',
      { method: 'PUT', key: PROBE, on: [1], fault: { kind: 'reset-before' } },
    ],
    [
      'a lost answer to the first create (it landed)',
      { method: 'PUT', key: PROBE, on: [1], fault: { kind: 'drop-response' } },
    ],
    [
      'a lost answer to the second create',
      { method: 'PUT', key: PROBE, on: [2], fault: { kind: 'drop-response' } },
    ],
    [
      'a 503 SlowDown on the read back',
      {
        method: 'GET',
        key: PROBE,
        on: [1, 2, 3],
        fault: { kind: 'error', status: 503, code: 'SlowDown' },
      },
    ],
    [
      'a 500 on the wrong-ETag replace',
      {
        method: 'PUT',
        key: PROBE,
        on: [3],
        fault: { kind: 'error', status: 500, code: 'InternalError' },
      },
    ],
    [
      'a reset of the right-ETag replace',
      { method: 'PUT', key: PROBE, on: [6], fault: { kind: 'reset-before' } },
    ],
    [
      'a lost answer to the right-ETag replace (it landed)',
      { method: 'PUT', key: PROBE, on: [6], fault: { kind: 'drop-response' } },
    ],
    [
      'a 503 on the read after the replace',
      {
        method: 'GET',
        key: PROBE,
        on: [4, 5, 6],
        fault: { kind: 'error', status: 503, code: 'ServiceUnavailable' },
      },
    ],
  ];
  for (const [name, rule] of cases) {
    it(`${name}: the probe passes on a fresh key and leaves no probe key`, async () => {
      const prefix = `probe-${randomUUID()}`;
      proxy.setRules([rule]);
      const seen = proxy.records.length;
      const store = storeThroughProxy(prefix);
      try {
        expect(await runProbe(store, noWait)).toEqual({ ok: true });
      } finally {
        store.close?.();
      }
      await proxy.idle();
      const records = proxy.records.slice(seen);
      const faulted = records.filter((r) => r.action !== 'forward');
      // A read is faulted on each of the SDK's own three tries, so the probe sees it.
      expect(faulted).toHaveLength(rule.method === 'GET' ? 3 : 1);
      // Two probe keys were created: the interrupted attempt's and the fresh one.
      const created = new Set(
        records.filter((r) => r.method === 'PUT' && PROBE.test(r.key)).map((r) => r.key),
      );
      expect(created.size).toBe(2);
      expect(await keysUnder(prefix)).toEqual([]);
    });
  }

  it('a store that keeps resetting is unreachable, not incompatible, and keeps no key', async () => {
    const prefix = `probe-${randomUUID()}`;
    proxy.setRules([{ method: 'PUT', key: PROBE, fault: { kind: 'drop-response' } }]);
    const store = storeThroughProxy(prefix);
    try {
      const verdict = await runProbe(store, { ...noWait, attempts: 3 });
      expect(verdict).toMatchObject({ ok: false, verdict: 'unreachable' });
      expect((verdict as { reason: string }).reason).toMatch(
        /^no answer could be trusted in 3 attempts; last: create-if-absent: ambiguous/,
      );
    } finally {
      store.close?.();
    }
    await proxy.idle();
    // Every create landed (its answer was dropped), and every one was deleted again.
    expect(await keysUnder(prefix)).toEqual([]);
  });
});

describe('slivingdoc startup through the fault proxy', () => {
  beforeAll(requireBuiltCli);

  async function env(endpoint: string) {
    const root = await mkdtemp(join(tmpdir(), 'slivingdoc-probe-'));
    await mkdir(join(root, 'ws'), { recursive: true });
    return {
      root,
      vars: {
        HOME: join(root, 'home'),
        SLIVINGDOC_BUCKET: s3.bucket,
        SLIVINGDOC_PREFIX: `probe-cli-${randomUUID()}`,
        SLIVINGDOC_PRIVATE_ROOT: join(root, 'private'),
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        AWS_REGION: 'us-east-1',
        LOG_LEVEL: 'error',
      },
    };
  }

  it('a reset of the first probe write does not refuse startup: the pull answers OK', async () => {
    proxy.setRules([{ method: 'PUT', key: PROBE, on: [1], fault: { kind: 'reset-before' } }]);
    const { root, vars } = await env(proxy.url);
    const run = await runCli(['pull', join(root, 'ws', 'a')], vars);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^OK {2}generation 0 {2}/);
    expect(proxy.records.some((r) => r.action === 'reset-before')).toBe(true);
    expect(await keysUnder(vars.SLIVINGDOC_PREFIX)).toEqual([]);
  }, 60_000);

  it('a store that stays unreachable gets its own one-line diagnostic and exit 1', async () => {
    proxy.setRules([{ key: PROBE, fault: { kind: 'reset-before' } }]);
    const { root, vars } = await env(proxy.url);
    const run = await runCli(['pull', join(root, 'ws', 'a')], vars);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^slivingdoc: store unreachable — the compatibility probe could not reach the store: no answer could be trusted in 8 attempts; last: create-if-absent: ambiguous \(\w+\)\n$/,
    );
    expect(run.stderr).not.toContain(s3.secretAccessKey);
    expect(run.stderr).not.toContain(s3.accessKeyId);
    expect(run.code).toBe(1);
  }, 60_000);
});
