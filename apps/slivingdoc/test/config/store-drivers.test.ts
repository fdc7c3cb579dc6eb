import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../../src/config/command-line';
import { STORE_DRIVERS } from '../../src/config/store-drivers';
import {
  defaultStoreDriver,
  driverOf,
  STORE_SECRET_ENV_VARS,
  storeDrivers,
} from '../../src/config/store-registry';
import { HELP } from '../../src/help';
import { describeStore } from '../../src/report/store';

describe('the store driver registry', () => {
  it('keys every driver by its kind; exactly one, the embedded store, is the default', () => {
    for (const [key, driver] of Object.entries(STORE_DRIVERS)) expect(driver.kind).toBe(key);
    expect(defaultStoreDriver.kind).toBe('embedded');
    expect(storeDrivers.filter((driver) => driver.selectedBy === undefined)).toEqual([
      defaultStoreDriver,
    ]);
  });

  it('names a declared setting as each selector, and no flag twice', () => {
    for (const driver of storeDrivers) {
      if (driver.selectedBy)
        expect(Object.keys(driver.settings)).toContain(driver.selectedBy.setting);
    }
    const flags = storeDrivers.flatMap((driver) =>
      Object.values(driver.settings).map((setting) => setting.flag),
    );
    expect(new Set(flags).size).toBe(flags.length);
    for (const flag of flags) expect(Object.keys(OPTIONS)).not.toContain(flag);
  });

  it('hands the scrubber the secret variables the drivers declare', () => {
    expect(STORE_SECRET_ENV_VARS).toEqual([
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
    ]);
  });

  it('finds the driver of a configuration', () => {
    expect(driverOf({ kind: 'embedded', dir: '/s', prefix: 'p' })).toBe(STORE_DRIVERS.embedded);
  });
});

describe('help built from the drivers', () => {
  it('lists the store options exactly as before drivers declared them', () => {
    expect(HELP).toContain(
      `Store and notebook options (flags override environment variables, which override defaults):
  --bucket <name>                 S3 bucket (SLIVINGDOC_BUCKET); none: the embedded store
  --prefix <prefix>               key prefix (SLIVINGDOC_PREFIX), default slivingdoc; --prefix= is the bucket root
  --region <region>               S3 region (AWS_REGION), needs --bucket
  --endpoint <url>                S3-compatible endpoint (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL), needs --bucket
  --path-style <true|false>       path-style S3 addressing (SLIVINGDOC_PATH_STYLE), needs --bucket
  --store-dir <dir>               embedded store directory (SLIVINGDOC_STORE_DIR)
  --workspace-root <dir>          directories callers may address (SLIVINGDOC_WORKSPACE_ROOT)
`,
    );
  });
});

describe('the store as status reports it', () => {
  const redact = (text: string) => text.replace('/home/u', '[private]');

  it('embedded: the redacted directory, no endpoint', () => {
    expect(
      describeStore({ kind: 'embedded', dir: '/home/u/store', prefix: 'slivingdoc' }, redact),
    ).toEqual({
      kind: 'embedded',
      location: '[private]/store',
      endpoint: null,
      prefix: 'slivingdoc',
    });
  });

  it('S3: the bucket and the endpoint, fields in the documented order', () => {
    const described = describeStore(
      {
        kind: 's3',
        bucket: 'notes',
        prefix: '',
        region: undefined,
        endpoint: 'http://127.0.0.1:7480',
        pathStyle: true,
      },
      redact,
    );
    expect(JSON.stringify(described)).toBe(
      '{"kind":"s3","location":"s3://notes","endpoint":"http://127.0.0.1:7480","prefix":""}',
    );
  });
});
