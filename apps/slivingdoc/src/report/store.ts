import { driverOf, type StoreConfig } from '../config/store-registry';

/** Where the store is, as reports show it: never a credential (endpoints carry none, §12). */
export interface StoreDescription {
  kind: StoreConfig['kind'];
  /** The embedded store's directory, or `s3://<bucket>` (the driver's `describe`). */
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
  const { location, endpoint } = driverOf(store).describe(store, redact);
  return { kind: store.kind, location, endpoint, prefix: store.prefix };
}
