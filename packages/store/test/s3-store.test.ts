import { describeObjectStore } from '@slivingdoc/store/testing';
import { freshBucket, requireS3 } from '@slivingdoc/testkit/s3-server';
import { afterAll, beforeAll } from 'vitest';
import type { ObjectStore } from '../src';
import { probedS3Store } from './s3-env';

let bucket: string;
const stores: ObjectStore[] = [];
beforeAll(async () => {
  bucket = await freshBucket(requireS3());
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close?.()));
});

// A small LIST page makes the listing test follow several continuations on the real server.
describeObjectStore(
  'real S3 (Ceph RADOS Gateway)',
  async (prefix) => {
    const store = await probedS3Store(requireS3(), { bucket, prefix, listPageSize: 2 });
    stores.push(store);
    return store;
  },
  { contenders: 8, rounds: 10 },
);
