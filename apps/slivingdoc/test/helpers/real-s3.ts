import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { expect, inject } from 'vitest';
import type { ProvidedS3 } from '../../../../tooling/rgw/global-setup';

/**
 * The environment that points the bin at a fresh bucket on the real S3 server of the global
 * setup; fails loudly when that server did not start.
 */
export async function realS3Env(): Promise<NodeJS.ProcessEnv> {
  const s3: ProvidedS3 = inject('s3');
  if ('error' in s3) throw new Error(`the real S3 server did not start:\n${s3.error}`);
  const endpoint = s3.env.SLIVINGDOC_TEST_S3_ENDPOINT;
  expect(['127.0.0.1', 'localhost', '[::1]']).toContain(new URL(endpoint).hostname);
  const credentials = {
    accessKeyId: s3.env.SLIVINGDOC_TEST_S3_ACCESS_KEY,
    secretAccessKey: s3.env.SLIVINGDOC_TEST_S3_SECRET_KEY,
  };
  // The SDK's notice about its future Node support is noise in a test run.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const bucket = `app-${randomUUID()}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
  return {
    SLIVINGDOC_BUCKET: bucket,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  };
}
