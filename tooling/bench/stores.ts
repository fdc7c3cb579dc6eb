// The two stores every slivingdoc scenario runs on: the embedded store in a local directory
// and the real S3 server (Ceph RGW started by tooling/rgw), each separated per scenario by
// prefix so one run never reads another run's notebook.
import {
  CURRENT_KEY,
  createEmbeddedStore,
  createS3Store,
  type ObjectStore,
  runProbe,
} from '@slivingdoc/store';

export interface StoreTarget {
  kind: 'embedded' | 's3';
  /** `slivingdoc serve` flags that select this store under `prefix`. */
  cliArgs(prefix: string): string[];
  /** Extra environment for a server process (the S3 credentials, for the default AWS chain). */
  env: Record<string, string>;
  /** The same store, opened in this process (in-process engine and the raw CAS ceiling). */
  open(prefix: string): Promise<ObjectStore>;
}

export function embeddedTarget(dir: string): StoreTarget {
  return {
    kind: 'embedded',
    cliArgs: (prefix) => ['--store-dir', dir, '--prefix', prefix],
    env: {},
    open: (prefix) => createEmbeddedStore({ dir, prefix }),
  };
}

export interface S3Settings {
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
}

/** Reads the `SLIVINGDOC_TEST_S3_*` pairs that tooling/rgw/start-rgw.sh prints. */
export function s3SettingsFromEnv(env: NodeJS.ProcessEnv): S3Settings | undefined {
  const endpoint = env.SLIVINGDOC_TEST_S3_ENDPOINT;
  const bucket = env.SLIVINGDOC_TEST_S3_BUCKET;
  const accessKey = env.SLIVINGDOC_TEST_S3_ACCESS_KEY;
  const secretKey = env.SLIVINGDOC_TEST_S3_SECRET_KEY;
  if (!endpoint || !bucket || !accessKey || !secretKey) return undefined;
  return { endpoint, bucket, accessKey, secretKey };
}

export function s3Target(s3: S3Settings): StoreTarget {
  return {
    kind: 's3',
    cliArgs: (prefix) => ['--bucket', s3.bucket, '--endpoint', s3.endpoint, '--prefix', prefix],
    env: {
      AWS_ACCESS_KEY_ID: s3.accessKey,
      AWS_SECRET_ACCESS_KEY: s3.secretKey,
      AWS_REGION: 'us-east-1',
    },
    open: async (prefix) => {
      const store = createS3Store({
        bucket: s3.bucket,
        prefix,
        endpoint: s3.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
      });
      // As the app does at startup: the probe picks the If-Match form the server honours
      // (Ceph RGW wants it bare); without it every replace of `current` is a 412.
      const probe = await runProbe(store);
      if (!probe.ok) throw new Error(`S3 compatibility probe failed: ${probe.reason}`);
      return store;
    },
  };
}

/** Counts compare-and-swap attempts on `current` (create-if-absent and replace-if-match). */
export interface CasCounter {
  attempts: number;
}

/** Wraps a store so every conditional write of `current` is counted; nothing else changes. */
export function countingStore(store: ObjectStore, counter: CasCounter): ObjectStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'createIfAbsent' || property === 'replaceIfMatch') {
        return (key: string, ...rest: unknown[]) => {
          if (key === CURRENT_KEY) counter.attempts++;
          return (value as (...args: unknown[]) => unknown).call(target, key, ...rest);
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
}
