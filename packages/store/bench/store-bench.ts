// `pnpm bench`: conditional-write round trips per second (sequential and 8 contenders) and
// pack upload/download throughput, for the embedded store and a real S3 server (Ceph RGW,
// started privately unless SLIVINGDOC_TEST_S3_* names one). Prints one table.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ensureS3Server } from '@slivingdoc/testkit/rgw-server';
import { renderColumns } from '@slivingdoc/testkit/table';
import {
  createEmbeddedStore,
  createS3Store,
  incrementKey,
  isStoreError,
  newUuidV7,
  type ObjectStore,
  runProbe,
} from '../src';

const CAS_SEQUENTIAL = Number(process.env.BENCH_CAS_OPS ?? 300);
const CAS_CONTENDED_WINS = Number(process.env.BENCH_CAS_WINS ?? 150);
const CONTENDERS = 8;
const PACKS = [
  { label: '1 MiB', size: 1 << 20, count: 16 },
  { label: '16 MiB', size: 16 << 20, count: 4 },
];

type Row = string[];
const seconds = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;
const fmt = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** One writer replacing `current` over and over: every attempt wins. */
async function casSequential(store: ObjectStore): Promise<number> {
  let { etag } = await store.createIfAbsent('current', randomBytes(512));
  const start = process.hrtime.bigint();
  for (let i = 0; i < CAS_SEQUENTIAL; i++) {
    ({ etag } = await store.replaceIfMatch('current', randomBytes(512), etag));
  }
  return CAS_SEQUENTIAL / seconds(start);
}

/** 8 contenders in read → replace-if-match loops until `CAS_CONTENDED_WINS` writes landed. */
async function casContended(store: ObjectStore): Promise<{ attempts: number; wins: number }> {
  await store.createIfAbsent('current', randomBytes(512)).catch(() => undefined);
  let wins = 0;
  let attempts = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONTENDERS }, async () => {
      while (wins < CAS_CONTENDED_WINS) {
        const current = (await store.get('current'))!;
        attempts += 1;
        try {
          await store.replaceIfMatch('current', randomBytes(512), current.etag);
          wins += 1;
        } catch (err) {
          // rgw answers many losers 500 (ambiguous): a re-read settles them, as the engine does.
          if (!isStoreError(err, 'precondition-failed', 'ambiguous')) throw err;
        }
      }
    }),
  );
  const elapsed = seconds(start);
  return { attempts: attempts / elapsed, wins: wins / elapsed };
}

/** Upload then stream back `count` packs of `size` bytes: MiB/s each way. */
async function packThroughput(store: ObjectStore, size: number, count: number) {
  const body = randomBytes(size);
  const keys = Array.from({ length: count }, () => incrementKey(2n, newUuidV7()));
  let start = process.hrtime.bigint();
  for (const key of keys) await store.putImmutable(key, body, { 'slivingdoc-kind': 'increment' });
  const up = (size * count) / (1 << 20) / seconds(start);
  start = process.hrtime.bigint();
  for (const key of keys) {
    let got = 0;
    for await (const chunk of (await store.getStream(key))!) got += chunk.byteLength;
    if (got !== size) throw new Error('short read');
  }
  const down = (size * count) / (1 << 20) / seconds(start);
  await store.deleteMany(keys);
  return { up, down };
}

async function measure(name: string, make: () => Promise<ObjectStore>): Promise<Row[]> {
  const rows: Row[] = [];
  const sequential = await casSequential(await make());
  rows.push([name, 'conditional write, 1 writer', `${fmt(sequential)} round trips/s`, '']);
  const contended = await casContended(await make());
  rows.push([
    name,
    `conditional write, ${CONTENDERS} contenders`,
    `${fmt(contended.attempts)} round trips/s`,
    `${fmt(contended.wins)} accepted/s`,
  ]);
  for (const pack of PACKS) {
    const { up, down } = await packThroughput(await make(), pack.size, pack.count);
    rows.push([
      name,
      `${pack.label} pack upload / download`,
      `${fmt(up)} MiB/s up`,
      `${fmt(down)} MiB/s down`,
    ]);
  }
  return rows;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'slivingdoc-store-bench-'));
  const server = await ensureS3Server(process.env, resolve(process.cwd(), '../../tooling/rgw'));
  try {
    const env = server.env;
    const credentials = {
      accessKeyId: env.SLIVINGDOC_TEST_S3_ACCESS_KEY,
      secretAccessKey: env.SLIVINGDOC_TEST_S3_SECRET_KEY,
    };
    const bucket = `bench-${newUuidV7()}`;
    const admin = new S3Client({
      endpoint: env.SLIVINGDOC_TEST_S3_ENDPOINT,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
    });
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    admin.destroy();
    const rows = [
      ...(await measure('embedded', () => createEmbeddedStore({ dir, prefix: newUuidV7() }))),
      ...(await measure('s3 (Ceph RGW)', async () => {
        const store = createS3Store({
          bucket,
          prefix: newUuidV7(),
          endpoint: env.SLIVINGDOC_TEST_S3_ENDPOINT,
          region: 'us-east-1',
          credentials,
        });
        const verdict = await runProbe(store);
        if (!verdict.ok) throw new Error(`probe failed: ${verdict.reason}`);
        return store;
      })),
    ];
    console.log(renderColumns(['store', 'measure', 'result', ''], rows));
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
