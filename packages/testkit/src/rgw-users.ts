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
export async function createRgwUser(
  env: S3TestEnv,
  name: string,
  /** Admin capabilities to grant, e.g. `user-policy=*` to call the IAM API's user policies. */
  caps?: string,
): Promise<RgwUser> {
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
  if (caps !== undefined)
    await run('radosgw-admin', ['caps', 'add', `--uid=${uid}`, `--caps=${caps}`], {
      env: { ...process.env, CEPH_CONF: conf },
    });
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

/**
 * Attaches an inline IAM policy to `user` through RGW's IAM API (`PutUserPolicy`), signed
 * with curl's SigV4 as `admin`, a user holding the `user-policy=*` capability. RGW evaluates
 * such a policy also for buckets other users own.
 */
export async function putUserPolicy(
  env: S3TestEnv,
  admin: RgwUser,
  user: RgwUser,
  policyName: string,
  policy: { Version: string; Statement: unknown[] },
): Promise<void> {
  const { stdout } = await run('curl', [
    '--silent',
    '--show-error',
    '--fail-with-body',
    '--max-time',
    '30',
    '--aws-sigv4',
    'aws:amz:us-east-1:iam',
    '--user',
    `${admin.accessKeyId}:${admin.secretAccessKey}`,
    '--data-urlencode',
    'Action=PutUserPolicy',
    '--data-urlencode',
    'Version=2010-05-08',
    '--data-urlencode',
    `UserName=${user.uid}`,
    '--data-urlencode',
    `PolicyName=${policyName}`,
    '--data-urlencode',
    `PolicyDocument=${JSON.stringify(policy)}`,
    `${env.SLIVINGDOC_TEST_S3_ENDPOINT}/`,
  ]);
  if (!stdout.includes('<PutUserPolicyResponse'))
    throw new Error(`PutUserPolicy gave no answer: ${stdout.slice(0, 500)}`);
}
