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
  const names = {
    endpoint: 'SLIVINGDOC_TEST_S3_ENDPOINT',
    accessKeyId: 'SLIVINGDOC_TEST_S3_ACCESS_KEY',
    secretAccessKey: 'SLIVINGDOC_TEST_S3_SECRET_KEY',
    bucket: 'SLIVINGDOC_TEST_S3_BUCKET',
  } as const;
  const missing = Object.values(names).filter((name) => !vars[name]);
  if (missing.length > 0) {
    throw new Error(`the real S3 server is required: ${missing.join(', ')} unset`);
  }
  return {
    endpoint: vars[names.endpoint] as string,
    accessKeyId: vars[names.accessKeyId] as string,
    secretAccessKey: vars[names.secretAccessKey] as string,
    bucket: vars[names.bucket] as string,
  };
}

/** The coordinates the rgw global setup provided, or its start failure as a thrown error. */
export function providedS3(provided: { env: object } | { error: string }): S3TestEnv {
  if ('error' in provided) throw new Error(`the real S3 server did not start: ${provided.error}`);
  return s3TestEnv(provided.env as Record<string, string>);
}
