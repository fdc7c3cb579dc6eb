import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { StoreError } from '../errors';
import {
  assertKey,
  assertListNamespace,
  assertPrefix,
  fullKey,
  isConditionalKey,
  isDeletableKey,
  isListedKey,
  isPackKey,
} from '../keys';
import { batches, type ConditionForms, type ListedObject, type ObjectStore } from '../object-store';
import { loadS3Sdk, type S3Sdk } from './s3-sdk';
import { putProven } from './settle-upload';

/** Every request gives up after this long (contract §7). */
export const S3_REQUEST_TIMEOUT_MS = 30_000;
/** Packs above this size are uploaded in parts. */
export const MULTIPART_THRESHOLD = 8 * 1024 * 1024;

/**
 * How `If-Match` carries the ETag: quoted, as AWS wants, or bare, the only form Ceph RGW
 * honours. The probe finds out which one the server takes (`conditionForms`).
 */
export type EtagForm = 'quoted' | 'bare';

const ETAG_FORMS: readonly EtagForm[] = ['quoted', 'bare'];

/** The S3 store: the object-store contract plus the `If-Match` form it sends. */
export interface S3Store extends ObjectStore {
  /** The ETag form sent in `If-Match` (the probe chooses it). */
  readonly etagForm: EtagForm;
  /** Switches the ETag form sent in `If-Match`. */
  useEtagForm(form: EtagForm): void;
  readonly conditionForms: ConditionForms;
}

/** Options of {@link createS3Store}. */
export interface S3StoreOptions {
  bucket: string;
  /** Key prefix (contract §7 rules; empty selects the bucket root). */
  prefix: string;
  /** S3-compatible endpoint (absolute http(s) URL); AWS resolution when omitted. */
  endpoint?: string;
  /** Region; the SDK's own resolution (environment, profile), else `us-east-1`, when omitted. */
  region?: string;
  /** Path-style addressing; defaults to true when an endpoint is set, else false. */
  pathStyle?: boolean;
  /** Static credentials; the SDK's default credential chain when omitted. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** `If-Match` form to start with (the probe may switch it); default `quoted`, as AWS wants. */
  etagForm?: EtagForm;
  /** Keys per LIST page (default 1,000, the S3 maximum); small values exercise continuations. */
  listPageSize?: number;
}

let sdkRegion: Promise<string> | undefined;

/**
 * Region from the SDK's own resolution (environment, shared config profile), else `us-east-1`.
 * Resolved once per process: the SDK calls a region provider on every request.
 */
function resolveRegion(): Promise<string> {
  sdkRegion ??= (async () => {
    const probe = new (await loadS3Sdk()).S3Client({});
    try {
      return await probe.config.region();
    } catch {
      return 'us-east-1';
    } finally {
      probe.destroy();
    }
  })();
  return sdkRegion;
}

const TRANSPORT_UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/**
 * Maps an SDK failure onto a StoreError. `mutating` says whether the request may have changed
 * the store: a 5xx, a reset or a timeout after sending is then `ambiguous`, never `failed`
 * (rgw answers 500 to conditional-write losers). The message carries status and error name
 * only, never the store's own message text, which may echo keys or credentials.
 */
export function classifyS3Error(op: string, err: unknown, mutating: boolean): StoreError {
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const name = e.name ?? 'Error';
  const token = status ? `${status} ${name}` : (e.code ?? name);
  const make = (kind: StoreError['kind'], transient = false) =>
    new StoreError(kind, `${op}: ${token}`, { code: e.code ?? name, cause: err, transient });
  if (status === 412) return make('precondition-failed');
  if (status === 401 || status === 403) return make('access-denied');
  if (status === 404) return make('not-found');
  // AWS: 409 ConditionalRequestConflict = a concurrent conditional write was in flight.
  if (status === 409 && mutating) return make('ambiguous');
  // 501 NotImplemented is a definite answer: the store does not do what was asked.
  if (status === 501) return make('other');
  if (status !== undefined && status >= 500) return make(mutating ? 'ambiguous' : 'other', true);
  if (status === 429 || /^(SlowDown|Throttl)/.test(name)) return make('other', true);
  if (status !== undefined) return make('other');
  const code = e.code ?? name;
  if (TRANSPORT_UNREACHABLE.has(code)) return make('unreachable');
  if (name === 'TimeoutError' && /without establishing a connection/.test(e.message ?? '')) {
    return make('unreachable');
  }
  // A reset or a timeout without an answer: the store may answer the next request.
  return make(mutating ? 'ambiguous' : 'other', true);
}

/** Re-throws a failure in the middle of a download (a reset, a timeout) as a StoreError. */
async function* classifiedStream(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    throw classifyS3Error('getStream', err, false);
  }
}

const bareEtag = (etag: string): string => etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');

/**
 * The S3 store (contract §7) on `@aws-sdk/client-s3`: conditional writes with `If-None-Match: *`
 * and `If-Match` sent through a client with `maxAttempts: 1` (an SDK retry could turn our own
 * landed write into a 412); checksums only when required (rgw refuses streamed trailers);
 * path-style with an endpoint; multipart above {@link MULTIPART_THRESHOLD}.
 */
export function createS3Store(opts: S3StoreOptions): S3Store {
  assertPrefix(opts.prefix);
  const { bucket, prefix } = opts;
  const config: S3ClientConfig = {
    region: opts.region ?? resolveRegion,
    forcePathStyle: opts.pathStyle ?? opts.endpoint !== undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      requestTimeout: S3_REQUEST_TIMEOUT_MS,
      connectionTimeout: S3_REQUEST_TIMEOUT_MS,
    },
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  };
  // Clients are made on first use, after the SDK is loaded (see s3-sdk.ts).
  let clients: Promise<{ sdk: S3Sdk; client: S3Client; conditionalClient: S3Client }> | undefined;
  const connect = () => {
    clients ??= loadS3Sdk().then((sdk) => ({
      sdk,
      client: new sdk.S3Client(config),
      conditionalClient: new sdk.S3Client({ ...config, maxAttempts: 1 }),
    }));
    return clients;
  };
  let etagForm: EtagForm = opts.etagForm ?? 'quoted';
  const at = (key: string): string => fullKey(prefix, key);

  async function send<T>(op: string, mutating: boolean, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw classifyS3Error(op, err, mutating);
    }
  }

  async function conditionalPut(
    op: string,
    key: string,
    body: Uint8Array,
    condition: { IfNoneMatch: string } | { IfMatch: string },
  ): Promise<{ etag: string }> {
    const { sdk, conditionalClient } = await connect();
    const response = await send(op, true, () =>
      conditionalClient.send(
        new sdk.PutObjectCommand({ Bucket: bucket, Key: at(key), Body: body, ...condition }),
      ),
    );
    if (!response.ETag) {
      throw new StoreError('ambiguous', `${op}: response without ETag`, { code: 'NO_ETAG' });
    }
    return { etag: response.ETag };
  }

  async function openStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const { sdk, client } = await connect();
    try {
      const response = await client.send(
        new sdk.GetObjectCommand({ Bucket: bucket, Key: at(key) }),
      );
      return classifiedStream(response.Body as AsyncIterable<Uint8Array>);
    } catch (err) {
      const mapped = classifyS3Error('getStream', err, false);
      if (mapped.kind === 'not-found' && mapped.code === 'NoSuchKey') return undefined;
      throw mapped;
    }
  }

  async function upload(key: string, body: Uint8Array, metadata: Record<string, string>) {
    const params = { Bucket: bucket, Key: at(key), Body: body, Metadata: metadata };
    const { sdk, client } = await connect();
    await send('putImmutable', true, async () => {
      if (body.byteLength <= MULTIPART_THRESHOLD) {
        await client.send(new sdk.PutObjectCommand(params));
        return;
      }
      await new sdk.Upload({
        client,
        params,
        partSize: MULTIPART_THRESHOLD,
        queueSize: 4,
        leavePartsOnError: false,
      }).done();
    });
  }

  const useEtagForm = (form: EtagForm) => {
    etagForm = form;
  };

  return {
    identity: `s3 ${opts.endpoint ?? 'aws'} ${bucket} ${prefix}`,
    get etagForm() {
      return etagForm;
    },
    useEtagForm,
    conditionForms: {
      candidates: () => [etagForm, etagForm === 'bare' ? 'quoted' : 'bare'],
      use(form) {
        if (!ETAG_FORMS.includes(form as EtagForm)) throw new TypeError('unknown ETag form');
        useEtagForm(form as EtagForm);
      },
    },
    async get(key) {
      assertKey(key, (k) => isConditionalKey(k) || isPackKey(k), 'get');
      const { sdk, client } = await connect();
      try {
        const response = await client.send(
          new sdk.GetObjectCommand({ Bucket: bucket, Key: at(key) }),
        );
        const body = await response.Body!.transformToByteArray();
        return { body, etag: response.ETag ?? '' };
      } catch (err) {
        const mapped = classifyS3Error('get', err, false);
        if (mapped.kind === 'not-found' && mapped.code === 'NoSuchKey') return undefined;
        throw mapped;
      }
    },
    createIfAbsent(key, body) {
      assertKey(key, isConditionalKey, 'createIfAbsent');
      return conditionalPut('createIfAbsent', key, body, { IfNoneMatch: '*' });
    },
    async replaceIfMatch(key, body, etag) {
      assertKey(key, isConditionalKey, 'replaceIfMatch');
      const bare = bareEtag(etag);
      const sent = etagForm === 'bare' ? bare : `"${bare}"`;
      try {
        return await conditionalPut('replaceIfMatch', key, body, { IfMatch: sent });
      } catch (err) {
        // AWS answers 404 to If-Match on a missing key, rgw 412: both mean "does not hold it".
        if (err instanceof StoreError && err.kind === 'not-found' && err.code === 'NoSuchKey') {
          throw new StoreError('precondition-failed', 'replaceIfMatch: key absent', {
            code: 'NoSuchKey',
            cause: err,
          });
        }
        throw err;
      }
    },
    putImmutable(key, body, metadata) {
      assertKey(key, isPackKey, 'putImmutable');
      return putProven(
        () => upload(key, body, metadata),
        () => openStream(key),
        body,
      );
    },
    getStream(key) {
      assertKey(key, isPackKey, 'getStream');
      return openStream(key);
    },
    async list(namespace) {
      assertListNamespace(namespace);
      const listed: ListedObject[] = [];
      const strip = at('').length;
      const { sdk, client } = await connect();
      let token: string | undefined;
      do {
        const page = await send('list', false, () =>
          client.send(
            new sdk.ListObjectsV2Command({
              Bucket: bucket,
              Prefix: at(namespace),
              ContinuationToken: token,
              MaxKeys: opts.listPageSize ?? 1000,
            }),
          ),
        );
        for (const item of page.Contents ?? []) {
          const key = item.Key?.slice(strip);
          if (key && isListedKey(namespace, key)) listed.push({ key, size: item.Size ?? 0 });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return listed;
    },
    async deleteMany(keys) {
      for (const key of keys) assertKey(key, isDeletableKey, 'deleteMany');
      const { sdk, client } = await connect();
      for (const batch of batches(keys)) {
        const response = await send('deleteMany', true, () =>
          client.send(
            new sdk.DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: batch.map((key) => ({ Key: at(key) })), Quiet: true },
            }),
          ),
        );
        const failed = response.Errors?.[0];
        if (failed) {
          const kind = failed.Code === 'AccessDenied' ? 'access-denied' : 'other';
          throw new StoreError(kind, `deleteMany: ${failed.Code ?? 'error'}`, {
            code: failed.Code,
          });
        }
      }
    },
    async close() {
      if (clients === undefined) return;
      const { client, conditionalClient } = await clients;
      client.destroy();
      conditionalClient.destroy();
    },
  };
}
