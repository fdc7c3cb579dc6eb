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
  // Node 20 is a tested runtime of this release (docs/distribution.md). On it the SDK's client
  // constructor prints a multi-line notice about the SDK's own future Node support through
  // `process.emitWarning`, into the stderr of every process that makes a client (an MCP host
  // shows that stderr to its user). Silenced here, where every client's SDK is loaded, unless
  // the user set the variable; the bin routes any warning left into one log record.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(
    ([clientS3, libStorage]) => ({ ...clientS3, Upload: libStorage.Upload }),
  );
  return loading;
}
