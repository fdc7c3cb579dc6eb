import { randomUUID } from 'node:crypto';
import {
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { type FaultProxy, startFaultProxy } from '@slivingdoc/testkit/fault-proxy';
import type {} from '@slivingdoc/testkit/rgw-global-setup';
import { providedS3, type S3TestEnv } from '@slivingdoc/testkit/s3-env';
import { until } from '@slivingdoc/testkit/until';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';

// The fault proxy in front of the real S3 server, driven by the AWS SDK directly: every
// fault must do to a real request exactly what its name promises.

let env: S3TestEnv;
let proxy: FaultProxy;
let direct: S3Client;
const prefix = `fault-proxy-${randomUUID()}`;

function client(endpoint: string, maxAttempts = 1): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    maxAttempts,
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
  });
}

async function read(key: string): Promise<string | undefined> {
  try {
    const out = await direct.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
    return await out.Body?.transformToString();
  } catch (err) {
    if (err instanceof NoSuchKey) return undefined;
    throw err;
  }
}

function put(s3: S3Client, key: string, body: string) {
  return s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: body }));
}

beforeAll(async () => {
  env = providedS3(inject('s3'));
  proxy = await startFaultProxy({ target: env.endpoint });
  direct = client(env.endpoint);
});
afterAll(async () => {
  await proxy?.close();
  direct?.destroy();
});
beforeEach(() => proxy.setRules([]));

describe('fault proxy in front of the real S3 server', () => {
  it('forwards untouched requests with valid signatures', async () => {
    const s3 = client(proxy.url);
    await put(s3, `${prefix}/plain`, 'hello');
    const got = await s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: `${prefix}/plain` }));
    expect(await got.Body?.transformToString()).toBe('hello');
    expect(proxy.records.at(-1)).toMatchObject({
      method: 'GET',
      key: `${prefix}/plain`,
      action: 'forward',
      upstreamStatus: 200,
    });
    s3.destroy();
  });

  it('drop-response applies the write upstream but the client sees a transport error', async () => {
    const key = `${prefix}/dropped`;
    proxy.setRules([{ method: 'PUT', key: /\/dropped$/, fault: { kind: 'drop-response' } }]);
    const s3 = client(proxy.url);
    const failure = await put(s3, key, 'landed').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(S3ServiceException);
    await proxy.idle();
    expect(await read(key)).toBe('landed');
    expect(proxy.records.at(-1)).toMatchObject({ action: 'drop-response', upstreamStatus: 200 });
    s3.destroy();
  });

  it('reset-before never lets the write reach the server', async () => {
    const key = `${prefix}/reset`;
    proxy.setRules([{ method: 'PUT', key: /\/reset$/, fault: { kind: 'reset-before' } }]);
    const s3 = client(proxy.url);
    const failure = await put(s3, key, 'never').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(S3ServiceException);
    expect(await read(key)).toBeUndefined();
    expect(proxy.records.at(-1)).toMatchObject({ action: 'reset-before' });
    expect(proxy.records.at(-1)?.upstreamStatus).toBeUndefined();
    s3.destroy();
  });

  it.each([
    [503, 'SlowDown'],
    [503, 'ServiceUnavailable'],
    [500, 'InternalError'],
  ] as const)('answers %i %s without forwarding', async (status, code) => {
    const key = `${prefix}/error-${code}`;
    proxy.setRules([{ method: 'PUT', key: /\/error-/, fault: { kind: 'error', status, code } }]);
    const s3 = client(proxy.url);
    const failure = await put(s3, key, 'never').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(S3ServiceException);
    expect((failure as S3ServiceException).name).toBe(code);
    expect((failure as S3ServiceException).$metadata.httpStatusCode).toBe(status);
    expect(await read(key)).toBeUndefined();
    s3.destroy();
  });

  it('fires only on the listed occurrences of the matching requests', async () => {
    const key = `${prefix}/counted`;
    proxy.setRules([
      { method: 'PUT', key: /\/counted$/, on: [2], fault: { kind: 'reset-before' } },
    ]);
    const s3 = client(proxy.url);
    await put(s3, key, 'one');
    await expect(put(s3, key, 'two')).rejects.toBeInstanceOf(Error);
    await put(s3, key, 'three');
    expect(await read(key)).toBe('three');
    const mine = proxy.records.filter((r) => r.key === key && r.method === 'PUT');
    expect(mine.map((r) => r.action)).toEqual(['forward', 'reset-before', 'forward']);
    s3.destroy();
  });

  it('lets the SDK retry through a one-off SlowDown', async () => {
    const key = `${prefix}/throttled`;
    proxy.setRules([
      {
        method: 'PUT',
        key: /\/throttled$/,
        on: [1],
        fault: { kind: 'error', status: 503, code: 'SlowDown' },
      },
    ]);
    const s3 = client(proxy.url, 3);
    await put(s3, key, 'after retry');
    expect(await read(key)).toBe('after retry');
    const mine = proxy.records.filter((r) => r.key === key);
    expect(mine.map((r) => r.action)).toEqual(['error', 'forward']);
    s3.destroy();
  });

  it('a delayed write whose client gave up still lands later (the late-write ambiguity)', async () => {
    const key = `${prefix}/late`;
    proxy.setRules([{ method: 'PUT', key: /\/late$/, fault: { kind: 'delay', ms: 1500 } }]);
    const s3 = client(proxy.url);
    const abort = new AbortController();
    const sent = s3
      .send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: 'late' }), {
        abortSignal: abort.signal,
      })
      .catch((err: unknown) => err);
    // Give up only once the proxy holds the whole request: from then on it is in flight.
    await until(
      () => proxy.records.some((r) => r.key === key && r.bodyReceived),
      'the proxy holds the whole request',
      { everyMs: 10 },
    );
    abort.abort();
    expect(await sent).toBeInstanceOf(Error);
    await proxy.idle();
    expect(await read(key)).toBe('late');
    expect(proxy.records.at(-1)).toMatchObject({ action: 'delay', upstreamStatus: 200 });
    s3.destroy();
  });

  it('matches conditional writes by method and key only, leaving reads alone', async () => {
    const key = `${prefix}/current`;
    await put(direct, key, 'v1');
    proxy.setRules([{ method: 'PUT', key: /\/current$/, fault: { kind: 'reset-before' } }]);
    const s3 = client(proxy.url);
    const got = await s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
    const etag = got.ETag;
    expect(await got.Body?.transformToString()).toBe('v1');
    await expect(
      s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: 'v2', IfMatch: etag })),
    ).rejects.toBeInstanceOf(Error);
    expect(await read(key)).toBe('v1');
    s3.destroy();
  });
});
