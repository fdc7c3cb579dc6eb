import {
  parseBooleanSetting,
  type StoreConfigBase,
  type StoreDriver,
  type StoreSetting,
} from '../driver';
import { parseBucket, parseEndpoint, parseRegion } from './s3-settings';

/** The configuration of the S3 store, as the app parsed it. */
export interface S3StoreConfig extends StoreConfigBase {
  kind: 's3';
  bucket: string;
  /** Key prefix; the empty string is the bucket root. */
  prefix: string;
  /** Undefined: the AWS SDK's own resolution (profile), else `us-east-1`. */
  region: string | undefined;
  /** Normalised endpoint URL; undefined: AWS's own endpoint resolution. */
  endpoint: string | undefined;
  pathStyle: boolean;
}

/** The S3 driver's settings. */
export interface S3StoreSettings {
  readonly [name: string]: StoreSetting;
  readonly bucket: StoreSetting<string>;
  readonly region: StoreSetting<string>;
  readonly endpoint: StoreSetting<string>;
  readonly pathStyle: StoreSetting<boolean>;
}

/**
 * The S3 driver: selected by a bucket. The AWS SDK's credential chain supplies credentials
 * (nothing here reads them), so its credential variables are only declared secret.
 */
export const s3StoreDriver: StoreDriver<S3StoreConfig, S3StoreSettings> = {
  kind: 's3',
  title: 'S3 store',
  selectedBy: { setting: 'bucket', noun: 'a bucket' },
  settings: {
    bucket: {
      flag: 'bucket',
      env: ['SLIVINGDOC_BUCKET'],
      placeholder: '<name>',
      help: 'S3 bucket',
      parse: parseBucket,
    },
    region: {
      flag: 'region',
      env: ['AWS_REGION'],
      placeholder: '<region>',
      help: 'S3 region',
      parse: parseRegion,
    },
    endpoint: {
      flag: 'endpoint',
      env: ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'],
      placeholder: '<url>',
      help: 'S3-compatible endpoint',
      parse: parseEndpoint,
    },
    pathStyle: {
      flag: 'path-style',
      env: ['SLIVINGDOC_PATH_STYLE'],
      placeholder: '<true|false>',
      help: 'path-style S3 addressing',
      parse: parseBooleanSetting,
    },
  },
  secretEnvVars: ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'],
  configure(values, { prefix }): S3StoreConfig {
    const { bucket, region, endpoint } = values;
    // Only a present bucket selects this driver; an absent one is a bug of the caller.
    if (bucket === undefined) throw new TypeError('the S3 driver needs a bucket');
    const pathStyle = values.pathStyle ?? endpoint !== undefined;
    return { kind: 's3', bucket, prefix, region, endpoint, pathStyle };
  },
  async open(config) {
    // A module of its own: a bundler puts the S3 store in a chunk only a bucket loads.
    const { createS3Store } = await import('./s3');
    return createS3Store({
      bucket: config.bucket,
      prefix: config.prefix,
      pathStyle: config.pathStyle,
      ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
      ...(config.region !== undefined ? { region: config.region } : {}),
    });
  },
  describe(config, redact) {
    return {
      location: `s3://${config.bucket}`,
      endpoint: config.endpoint === undefined ? null : redact(config.endpoint),
    };
  },
  localDirectory() {
    return undefined;
  },
};
