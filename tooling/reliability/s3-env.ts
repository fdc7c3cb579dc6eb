/**
 * The real S3 server's coordinates for the reliability suites, read from the
 * `SLIVINGDOC_TEST_S3_*` variables that `tooling/test-all.sh` (or the store package's vitest
 * global setup) exports. Missing variables fail loudly: these suites never skip.
 */
export interface S3TestEnv {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

/** Returns the S3 test coordinates or throws naming the missing variables. */
export function s3TestEnv(): S3TestEnv {
  const names = {
    endpoint: 'SLIVINGDOC_TEST_S3_ENDPOINT',
    accessKeyId: 'SLIVINGDOC_TEST_S3_ACCESS_KEY',
    secretAccessKey: 'SLIVINGDOC_TEST_S3_SECRET_KEY',
    bucket: 'SLIVINGDOC_TEST_S3_BUCKET',
  } as const;
  const missing = Object.values(names).filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(
      `the real S3 server is required: ${missing.join(', ')} unset (run via tooling/test-all.sh)`,
    );
  }
  return {
    endpoint: process.env[names.endpoint] as string,
    accessKeyId: process.env[names.accessKeyId] as string,
    secretAccessKey: process.env[names.secretAccessKey] as string,
    bucket: process.env[names.bucket] as string,
  };
}
