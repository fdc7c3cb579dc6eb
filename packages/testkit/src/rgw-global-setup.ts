import type { TestProject } from 'vitest/node';
import { ensureS3Server, type S3TestEnv } from './rgw-server';

/** What the setup provides as `inject('s3')`: the server's environment, or why it could not start. */
export type ProvidedS3 = { env: S3TestEnv } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    s3: ProvidedS3;
  }
}

/**
 * Vitest global setup for any project whose tests need the real S3 server: reuses the one
 * `tooling/test-all.sh` started (SLIVINGDOC_TEST_S3_* set), or starts a private one and stops
 * it at teardown. A start failure is provided as `{ error }` so the S3 suites fail loudly
 * (`requireS3` in their `beforeAll`) while the other suites of the project still run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    const server = await ensureS3Server();
    project.provide('s3', { env: server.env });
    return () => server.stop();
  } catch (err) {
    project.provide('s3', { error: err instanceof Error ? err.message : String(err) });
    return async () => undefined;
  }
}
