import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { credentialsOf, freshBucket, rawClient, requireS3 } from '@slivingdoc/testkit/s3-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkpointKey,
  createS3Store,
  incrementKey,
  isStoreError,
  MULTIPART_THRESHOLD,
  newUuidV7,
  runProbe,
  type StoreError,
} from '../src';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('S3 store against the real server (Ceph RADOS Gateway)', () => {
  let bucket: string;
  beforeAll(async () => {
    bucket = await freshBucket(requireS3());
  });
  const storeWith = (over: Partial<Parameters<typeof createS3Store>[0]> = {}) => {
    const env = requireS3();
    return createS3Store({
      bucket,
      prefix: `b/${newUuidV7()}`,
      endpoint: env.SLIVINGDOC_TEST_S3_ENDPOINT,
      region: 'us-east-1',
      credentials: credentialsOf(env),
      ...over,
    });
  };

  it('probe passes and picks the bare ETag form, the only one rgw honours', async () => {
    const store = storeWith({ etagForm: 'quoted' });
    expect(await runProbe(store)).toEqual({ ok: true });
    expect(store.etagForm).toBe('bare');
  });

  it('a quoted If-Match is refused by rgw even when right (why the probe must decide)', async () => {
    const store = storeWith({ etagForm: 'quoted' });
    const { etag } = await store.createIfAbsent('current', text('a'));
    const err = await rejection(store.replaceIfMatch('current', text('b'), etag));
    expect(isStoreError(err, 'precondition-failed')).toBe(true);
    store.useEtagForm('bare');
    await store.replaceIfMatch('current', text('b'), etag);
  });

  it('probe fails with a redacted reason on a wrong secret key', async () => {
    const env = requireS3();
    const secretAccessKey = `wrong${randomBytes(12).toString('hex')}`;
    const store = storeWith({
      credentials: { accessKeyId: env.SLIVINGDOC_TEST_S3_ACCESS_KEY, secretAccessKey },
    });
    const verdict = await runProbe(store);
    expect(verdict).toEqual({
      ok: false,
      verdict: 'incompatible',
      reason: 'create-if-absent: access-denied (SignatureDoesNotMatch)',
      code: 'SignatureDoesNotMatch',
    });
  });

  it('probe fails with a redacted reason on an unknown access key', async () => {
    const accessKeyId = `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(20).toString('hex');
    const verdict = await runProbe(storeWith({ credentials: { accessKeyId, secretAccessKey } }));
    expect(verdict.ok).toBe(false);
    const reason = (verdict as { reason: string }).reason;
    expect(reason).toMatch(/^create-if-absent: access-denied \(\w+\)$/);
    expect(reason).not.toContain(accessKeyId);
    expect(reason).not.toContain(secretAccessKey);
  });

  it('uploads a pack above the multipart threshold with its metadata and streams it back', async () => {
    const env = requireS3();
    const prefix = `mp/${newUuidV7()}`;
    const store = storeWith({ prefix });
    const key = checkpointKey(1n, newUuidV7());
    const body = randomBytes(MULTIPART_THRESHOLD + 1024 * 1024);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const metadata = {
      'slivingdoc-sha256': sha256,
      'slivingdoc-size': String(body.length),
      'slivingdoc-kind': 'checkpoint',
      'slivingdoc-generation': '1',
    };
    await store.putImmutable(key, body, metadata);
    const chunks: Uint8Array[] = [];
    for await (const chunk of (await store.getStream(key))!) chunks.push(chunk);
    expect(createHash('sha256').update(Buffer.concat(chunks)).digest('hex')).toBe(sha256);
    const client = rawClient(env);
    const head = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}` }),
    );
    client.destroy();
    expect(head.Metadata).toEqual(metadata);
    expect(head.ContentLength).toBe(body.length);
  });
});

/** A loopback HTTP server that answers every request with `answer`, recording what it got. */
function fakeS3(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: {
    method: string;
    url: string;
    ifMatch?: string;
    ifNoneMatch?: string;
    authorization?: string;
  }[] = [];
  let server: Server;
  let endpoint = '';
  return {
    seen,
    get endpoint() {
      return endpoint;
    },
    async start() {
      server = createServer((req, res) => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          ifMatch: req.headers['if-match'] as string | undefined,
          ifNoneMatch: req.headers['if-none-match'] as string | undefined,
          authorization: req.headers.authorization,
        });
        req.resume();
        req.on('end', () => answer(req, res));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function s3Error(res: ServerResponse, status: number, code: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>secret-ish text</Message></Error>`,
  );
}

describe('S3 store error semantics (loopback fake server for the faults)', () => {
  const fakes: ReturnType<typeof fakeS3>[] = [];
  afterAll(async () => {
    await Promise.all(fakes.map((f) => f.stop()));
  });
  async function storeOn(
    answer: (req: IncomingMessage, res: ServerResponse) => void,
    region: string | undefined = 'us-east-1',
  ) {
    const fake = fakeS3(answer);
    await fake.start();
    fakes.push(fake);
    const store = createS3Store({
      bucket: 'b',
      prefix: 'p',
      endpoint: fake.endpoint,
      region,
      credentials: { accessKeyId: 'AKIAEXAMPLEEXAMPLE00', secretAccessKey: 'not-a-real-secret' },
    });
    return { fake, store };
  }

  it('a 500 on a conditional write is ambiguous and is sent exactly once', async () => {
    const { fake, store } = await storeOn((_req, res) => s3Error(res, 500, 'InternalError'));
    const err = await rejection(store.createIfAbsent('current', text('a')));
    expect(isStoreError(err, 'ambiguous')).toBe(true);
    expect(fake.seen.filter((r) => r.method === 'PUT')).toHaveLength(1);
    expect(fake.seen[0]?.ifNoneMatch).toBe('*');
  });

  it('a connection dropped after sending a conditional write is ambiguous, sent once', async () => {
    const { fake, store } = await storeOn((req) => req.socket.destroy());
    const err = await rejection(store.replaceIfMatch('current', text('a'), '"abc"'));
    expect(isStoreError(err, 'ambiguous')).toBe(true);
    expect(fake.seen).toHaveLength(1);
  });

  it('a 412 is precondition-failed; the ETag goes out in the chosen form', async () => {
    const { fake, store } = await storeOn((_req, res) => s3Error(res, 412, 'PreconditionFailed'));
    const quoted = await rejection(store.replaceIfMatch('current', text('a'), '"abc"'));
    expect(isStoreError(quoted, 'precondition-failed')).toBe(true);
    store.useEtagForm('bare');
    await rejection(store.replaceIfMatch('current', text('a'), '"abc"'));
    expect(fake.seen.map((r) => r.ifMatch)).toEqual(['"abc"', 'abc']);
  });

  it("AWS's 404 to If-Match on a missing key is precondition-failed too", async () => {
    const { store } = await storeOn((_req, res) => s3Error(res, 404, 'NoSuchKey'));
    const err = await rejection(store.replaceIfMatch('current', text('a'), '"abc"'));
    expect(isStoreError(err, 'precondition-failed')).toBe(true);
  });

  it('a 409 ConditionalRequestConflict on a conditional write is ambiguous', async () => {
    const { store } = await storeOn((_req, res) => s3Error(res, 409, 'ConditionalRequestConflict'));
    const err = await rejection(store.createIfAbsent('current', text('a')));
    expect(isStoreError(err, 'ambiguous')).toBe(true);
  });

  it('a 403 is access-denied and the message carries no store text or key', async () => {
    const { store } = await storeOn((_req, res) => s3Error(res, 403, 'AccessDenied'));
    const err = await rejection(store.get('current'));
    expect(isStoreError(err, 'access-denied')).toBe(true);
    expect((err as Error).message).toBe('get: 403 AccessDenied');
  });

  it('a 5xx on a read is other, not ambiguous, and worth asking again', async () => {
    const { store } = await storeOn((_req, res) => s3Error(res, 503, 'SlowDown'));
    const err = await rejection(store.list('packs/'));
    expect(isStoreError(err, 'other')).toBe(true);
    expect((err as StoreError).transient).toBe(true);
  });

  it('a 501 NotImplemented is a definite answer, even to a conditional write', async () => {
    const { store } = await storeOn((_req, res) => s3Error(res, 501, 'NotImplemented'));
    const err = await rejection(store.createIfAbsent('current', text('a')));
    expect(isStoreError(err, 'other')).toBe(true);
    expect((err as StoreError).transient).toBe(false);
  });

  it('a refused connection is unreachable', async () => {
    const { fake, store } = await storeOn((_req, res) => s3Error(res, 500, 'x'));
    await fake.stop();
    fakes.splice(fakes.indexOf(fake), 1);
    const err = await rejection(store.createIfAbsent('current', text('a')));
    expect(isStoreError(err, 'unreachable')).toBe(true);
  });

  it('an ambiguous pack upload whose bytes did land is settled as success', async () => {
    const body = text('pack bytes');
    const { store } = await storeOn((req, res) => {
      if (req.method === 'PUT') return s3Error(res, 500, 'InternalError');
      res.writeHead(200, { etag: '"x"', 'content-length': String(body.length) });
      res.end(Buffer.from(body));
    });
    await store.putImmutable(incrementKey(2n, newUuidV7()), body, {});
  });

  it('an ambiguous pack upload whose read-back differs stays ambiguous', async () => {
    const { store } = await storeOn((req, res) => {
      if (req.method === 'PUT') return s3Error(res, 500, 'InternalError');
      res.writeHead(200, { etag: '"x"', 'content-length': '5' });
      res.end('other');
    });
    const err = await rejection(
      store.putImmutable(incrementKey(2n, newUuidV7()), text('pack bytes'), {}),
    );
    expect(isStoreError(err, 'ambiguous')).toBe(true);
  });

  it('uses path-style requests on an endpoint and falls back to us-east-1 without a region', async () => {
    const saved = { ...process.env };
    for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE'])
      delete process.env[name];
    process.env.AWS_CONFIG_FILE = '/nonexistent/slivingdoc-test-config';
    try {
      const { fake, store } = await storeOn(
        (_req, res) => s3Error(res, 404, 'NoSuchKey'),
        undefined,
      );
      expect(await store.get('current')).toBeUndefined();
      expect(fake.seen[0]?.url).toMatch(/^\/b\/p\/current(\?|$)/);
      expect(fake.seen[0]?.authorization).toContain('/us-east-1/s3/aws4_request');
    } finally {
      process.env = saved;
    }
  });

  it('a download cut off midway fails as a StoreError, not a raw socket error', async () => {
    const { store } = await storeOn((_req, res) => {
      res.writeHead(200, { etag: '"x"', 'content-length': '1000000' });
      res.write(Buffer.alloc(1000));
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const stream = (await store.getStream(incrementKey(2n, newUuidV7())))!;
    const err = await rejection(
      (async () => {
        for await (const _chunk of stream) {
          // drain
        }
      })(),
    );
    expect(isStoreError(err, 'other')).toBe(true);
  });
});
