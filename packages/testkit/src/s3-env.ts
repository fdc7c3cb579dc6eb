import { s3EnvFrom } from './rgw-server';

/**
 * The real S3 server's coordinates for the reliability suites. Tests get them from the
 * rgw global setup (`inject('s3')`); `pnpm soak` from the `SLIVINGDOC_TEST_S3_*` variables.
 * Missing coordinates fail loudly: these suites never skip.
 */
export interface S3TestEnv {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

/** Reads the coordinates from `SLIVINGDOC_TEST_S3_*` variables, or throws naming the missing ones. */
export function s3TestEnv(vars: Record<string, string | undefined> = process.env): S3TestEnv {
  const env = s3EnvFrom(vars);
  if (!env) throw new Error('the real S3 server is required: SLIVINGDOC_TEST_S3_ENDPOINT unset');
  return {
    endpoint: env.SLIVINGDOC_TEST_S3_ENDPOINT,
    accessKeyId: env.SLIVINGDOC_TEST_S3_ACCESS_KEY,
    secretAccessKey: env.SLIVINGDOC_TEST_S3_SECRET_KEY,
    bucket: env.SLIVINGDOC_TEST_S3_BUCKET,
  };
}

/** The coordinates the rgw global setup provided, or its start failure as a thrown error. */
export function providedS3(provided: { env: object } | { error: string }): S3TestEnv {
  if ('error' in provided) throw new Error(`the real S3 server did not start: ${provided.error}`);
  return s3TestEnv(provided.env as Record<string, string>);
}
