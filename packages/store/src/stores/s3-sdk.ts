import type * as ClientS3 from '@aws-sdk/client-s3';
import type { Upload } from '@aws-sdk/lib-storage';

/** The parts of the AWS SDK the S3 store uses. */
export type S3Sdk = typeof ClientS3 & { Upload: typeof Upload };

let loading: Promise<S3Sdk> | undefined;

/**
 * Loads the AWS SDK on first use. Every process imports this package, but only one configured
 * with a bucket needs the SDK; importing it eagerly costs an embedded-store process about
 * 0.5–1 s of start-up and 27 MB.
 */
export function loadS3Sdk(): Promise<S3Sdk> {
  loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(
    ([clientS3, libStorage]) => ({ ...clientS3, Upload: libStorage.Upload }),
  );
  return loading;
}
