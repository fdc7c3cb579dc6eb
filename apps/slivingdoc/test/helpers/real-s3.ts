import { credentialsOf, freshBucket, requireS3 } from '@slivingdoc/testkit/s3-server';

/**
 * The environment that points the bin at a fresh bucket on the real S3 server of the global
 * setup; fails loudly when that server did not start.
 */
export async function realS3Env(): Promise<NodeJS.ProcessEnv> {
  const env = requireS3();
  const credentials = credentialsOf(env);
  // The SDK's notice about its future Node support is noise in a test run.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  return {
    SLIVINGDOC_BUCKET: await freshBucket(env),
    AWS_ENDPOINT_URL_S3: env.SLIVINGDOC_TEST_S3_ENDPOINT,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  };
}
