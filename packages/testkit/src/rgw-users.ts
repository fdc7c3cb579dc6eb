import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { PutBucketPolicyCommand } from '@aws-sdk/client-s3';
import type { S3TestEnv } from './rgw-server';
import { rawClient } from './s3-server';

const run = promisify(execFile);

/** One S3 user of the test RGW besides its owner: its id, its principal ARN and credentials. */
export interface RgwUser {
  uid: string;
  /** The principal a bucket policy names it by (`arn:aws:iam:::user/<uid>` on RGW). */
  arn: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Creates a user on the RGW that `tooling/rgw/start-rgw.sh` started, with `radosgw-admin`
 * on that cluster's conf. Throws (never skips) when the server was named from elsewhere and
 * its conf is unknown. `name` is suffixed with random bytes, so reruns never collide.
 */
export async function createRgwUser(env: S3TestEnv, name: string): Promise<RgwUser> {
  const conf = env.SLIVINGDOC_TEST_RGW_CEPH_CONF;
  if (!conf)
    throw new Error(
      'creating S3 users needs the RGW cluster conf: SLIVINGDOC_TEST_RGW_CEPH_CONF unset (start the server with tooling/rgw/start-rgw.sh)',
    );
  const uid = `${name}-${randomBytes(4).toString('hex')}`;
  const accessKeyId = `K${randomBytes(10).toString('hex').toUpperCase()}`.slice(0, 20);
  const secretAccessKey = randomBytes(20).toString('hex');
  await run(
    'radosgw-admin',
    [
      'user',
      'create',
      `--uid=${uid}`,
      `--display-name=${uid}`,
      `--access-key=${accessKeyId}`,
      `--secret-key=${secretAccessKey}`,
    ],
    { env: { ...process.env, CEPH_CONF: conf } },
  );
  return { uid, arn: `arn:aws:iam:::user/${uid}`, accessKeyId, secretAccessKey };
}

/** Replaces `bucket`'s policy (as the bucket's owner, the test server's own user). */
export async function putBucketPolicy(
  env: S3TestEnv,
  bucket: string,
  policy: { Version: string; Statement: unknown[] },
): Promise<void> {
  const client = rawClient(env);
  try {
    await client.send(
      new PutBucketPolicyCommand({ Bucket: bucket, Policy: JSON.stringify(policy) }),
    );
  } finally {
    client.destroy();
  }
}
