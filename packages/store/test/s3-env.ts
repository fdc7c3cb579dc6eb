import type { S3TestEnv } from '@slivingdoc/testkit/rgw-server';
import { credentialsOf } from '@slivingdoc/testkit/s3-server';
import { createS3Store, type ObjectStore, runProbe, type S3StoreOptions } from '../src';

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
