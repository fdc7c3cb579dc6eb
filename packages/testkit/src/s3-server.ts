import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import type { ProvidedS3 } from './rgw-global-setup';
import type { S3TestEnv } from './rgw-server';

/**
 * The real S3 server of the global setup (`./rgw-global-setup`). Throws (so the suite fails
 * loudly, never skips) when it could not start or is not on loopback.
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
export function credentialsOf(env: S3TestEnv): { accessKeyId: string; secretAccessKey: string } {
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
  const bucket = `t-${randomUUID()}`;
  const client = rawClient(env);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  return bucket;
}
