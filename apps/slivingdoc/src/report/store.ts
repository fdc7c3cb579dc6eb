import type { StoreConfig } from '../config/types';

/** Where the store is, as reports show it: never a credential (endpoints carry none, §12). */
export interface StoreDescription {
  kind: 'embedded' | 's3';
  /** The embedded store's directory, or `s3://<bucket>`. */
  location: string;
  /** The S3 endpoint (normalised, no user info); null for AWS's own or the embedded store. */
  endpoint: string | null;
  prefix: string;
}

/** The configured store, described for `status`; `redact` is the diagnostic scrubber. */
export function describeStore(
  store: StoreConfig,
  redact: (text: string) => string,
): StoreDescription {
  if (store.kind === 'embedded') {
    return { kind: 'embedded', location: redact(store.dir), endpoint: null, prefix: store.prefix };
  }
  return {
    kind: 's3',
    location: `s3://${store.bucket}`,
    endpoint: store.endpoint === undefined ? null : redact(store.endpoint),
    prefix: store.prefix,
  };
}
