import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import type { ProvidedS3 } from '../../../tooling/rgw/global-setup';
import type { S3TestEnv } from '../../../tooling/rgw/rgw-server';
import { createS3Store, type ObjectStore, runProbe, type S3StoreOptions } from '../src';
import { newUuidV7 } from '../src/uuid';

/**
 * The real S3 server of the global setup. Throws (so the suite fails loudly, never skips) when
 * it could not start.
 */
export function requireS3(): S3TestEnv {
  const s3: ProvidedS3 = inject('s3');
  if ('error' in s3) throw new Error(`the real S3 server did not start:\n${s3.error}`);
  const endpoint = new URL(s3.env.SLIVINGDOC_TEST_S3_ENDPOINT);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(endpoint.hostname)) {
    throw new Error('tests talk only to loopback');
  }
  return s3.env;
}

/** Credentials of the test server's user. */
export function credentialsOf(env: S3TestEnv) {
  return {
    accessKeyId: env.SLIVINGDOC_TEST_S3_ACCESS_KEY,
    secretAccessKey: env.SLIVINGDOC_TEST_S3_SECRET_KEY,
  };
}

/** A raw SDK client on the test server, for checks behind the store's back. */
export function rawClient(env: S3TestEnv): S3Client {
  return new S3Client({
    endpoint: env.SLIVINGDOC_TEST_S3_ENDPOINT,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: credentialsOf(env),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Creates a bucket of its own for one test file, so suites never see each other's keys. */
export async function freshBucket(env: S3TestEnv): Promise<string> {
  const bucket = `t-${newUuidV7()}`;
  const client = rawClient(env);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  return bucket;
}

/** An S3 store on the test server, with the ETag form chosen by the probe. */
export async function probedS3Store(
  env: S3TestEnv,
  opts: Partial<S3StoreOptions> & { bucket: string; prefix: string },
): Promise<ObjectStore> {
  const store = createS3Store({
    endpoint: env.SLIVINGDOC_TEST_S3_ENDPOINT,
    region: 'us-east-1',
    credentials: credentialsOf(env),
    ...opts,
  });
  const verdict = await runProbe(store);
  if (!verdict.ok) throw new Error(`probe failed: ${verdict.reason}`);
  return store;
}
