import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  embeddedStoreDriver,
  parseBooleanSetting,
  runProbe,
  type S3StoreConfig,
  StoreSettingError,
  s3StoreDriver,
} from '../src';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A setting's refusal: its reason and whether the value may be echoed. */
function refusal(parse: () => unknown): { reason: string; echoValue: boolean } {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(StoreSettingError);
    const { message, echoValue } = error as StoreSettingError;
    return { reason: message, echoValue };
  }
  throw new Error('expected a refusal');
}

const noPaths = {
  resolvePath: () => {
    throw new Error('not a path setting');
  },
};

describe('the S3 driver', () => {
  const { settings } = s3StoreDriver;
  const context = { prefix: 'p', dataHome: '/home/u/.local/share' };
  const configure = (values: Partial<Record<keyof typeof settings, unknown>>) =>
    s3StoreDriver.configure(
      {
        bucket: undefined,
        region: undefined,
        endpoint: undefined,
        pathStyle: undefined,
        ...values,
      },
      context,
    ) as S3StoreConfig;

  it('is selected by its bucket and declares the AWS credential variables secret', () => {
    expect(s3StoreDriver.selectedBy).toEqual({ setting: 'bucket', noun: 'a bucket' });
    expect(Object.values(settings).map((s) => [s.flag, s.env])).toEqual([
      ['bucket', ['SLIVINGDOC_BUCKET']],
      ['region', ['AWS_REGION']],
      ['endpoint', ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL']],
      ['path-style', ['SLIVINGDOC_PATH_STYLE']],
    ]);
    expect(s3StoreDriver.secretEnvVars).toEqual([
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
    ]);
  });

  it('checks bucket names and regions, echoing the refused value', () => {
    expect(settings.bucket.parse('notes.b-1', noPaths)).toBe('notes.b-1');
    for (const bad of ['ab', 'Bad_Bucket', 'a..b', '-ab', `a${'b'.repeat(63)}`]) {
      expect(refusal(() => settings.bucket.parse(bad, noPaths))).toEqual({
        reason: 'is not a valid bucket name',
        echoValue: true,
      });
    }
    expect(settings.region.parse('garage', noPaths)).toBe('garage');
    expect(refusal(() => settings.region.parse('us east', noPaths))).toEqual({
      reason: 'is not a valid region',
      echoValue: true,
    });
  });

  it('normalises an endpoint and never echoes a refused one', () => {
    expect(settings.endpoint.parse('HTTP://LocalHost:7480/', noPaths)).toBe(
      'http://localhost:7480',
    );
    expect(settings.endpoint.parse('https://h:443/base//', noPaths)).toBe('https://h/base');
    for (const [raw, reason] of [
      ['http://key:secret@h', 'user info is not allowed in an endpoint'],
      ['not a url', 'not an absolute URL'],
      ['ftp://h', 'the scheme must be http or https'],
      ['http://h/?', 'a query is not allowed in an endpoint'],
      ['http://h/#f', 'a fragment is not allowed in an endpoint'],
    ] as const) {
      expect(refusal(() => settings.endpoint.parse(raw, noPaths))).toEqual({
        reason,
        echoValue: false,
      });
    }
  });

  it('takes path style as a boolean, else from whether an endpoint is set', () => {
    expect(configure({ bucket: 'notes' })).toEqual({
      kind: 's3',
      bucket: 'notes',
      prefix: 'p',
      region: undefined,
      endpoint: undefined,
      pathStyle: false,
    });
    expect(configure({ bucket: 'notes', endpoint: 'http://h' }).pathStyle).toBe(true);
    expect(configure({ bucket: 'notes', endpoint: 'http://h', pathStyle: false }).pathStyle).toBe(
      false,
    );
    expect(() => configure({})).toThrow(TypeError);
  });

  it('describes the bucket and the redacted endpoint, and owns no local directory', () => {
    const config = configure({ bucket: 'notes', endpoint: 'http://h:7480' });
    expect(s3StoreDriver.describe(config, (text) => `<${text}>`)).toEqual({
      location: 's3://notes',
      endpoint: '<http://h:7480>',
    });
    expect(s3StoreDriver.describe(configure({ bucket: 'notes' }), String)).toEqual({
      location: 's3://notes',
      endpoint: null,
    });
    expect(s3StoreDriver.localDirectory(config)).toBeUndefined();
  });

  it('opens an S3 store on the configured bucket, endpoint and prefix', async () => {
    const store = await s3StoreDriver.open(configure({ bucket: 'notes', endpoint: 'http://h:1' }));
    expect(store.identity).toBe('s3 http://h:1 notes p');
    await store.close?.();
  });
});

describe('the embedded driver', () => {
  const { settings } = embeddedStoreDriver;

  it('is the default driver and declares no secret', () => {
    expect(embeddedStoreDriver.selectedBy).toBeUndefined();
    expect(embeddedStoreDriver.secretEnvVars).toEqual([]);
    expect(Object.values(settings).map((s) => [s.flag, s.env])).toEqual([
      ['store-dir', ['SLIVINGDOC_STORE_DIR']],
    ]);
  });

  it('resolves its directory as an app path, else keeps it below the data directory', () => {
    const resolvePath = (raw: string) => `/resolved/${raw}`;
    expect(settings.dir.parse('~/s', { resolvePath })).toBe('/resolved/~/s');
    const context = { prefix: 'p', dataHome: '/data' };
    expect(embeddedStoreDriver.configure({ dir: undefined }, context)).toEqual({
      kind: 'embedded',
      dir: '/data/slivingdoc/store',
      prefix: 'p',
    });
    expect(embeddedStoreDriver.configure({ dir: '/s' }, context).dir).toBe('/s');
  });

  it('describes its redacted directory and owns it locally', () => {
    const config = { kind: 'embedded', dir: '/s', prefix: 'p' } as const;
    expect(embeddedStoreDriver.describe(config, (text) => `<${text}>`)).toEqual({
      location: '</s>',
      endpoint: null,
    });
    expect(embeddedStoreDriver.localDirectory(config)).toBe('/s');
  });

  it('opens a working embedded store in its directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slivingdoc-driver-'));
    dirs.push(dir);
    const store = await embeddedStoreDriver.open({ kind: 'embedded', dir, prefix: 'p' });
    expect(await runProbe(store)).toEqual({ ok: true });
    const { etag } = await store.createIfAbsent('current', new TextEncoder().encode('v1'));
    expect((await store.get('current'))?.etag).toBe(etag);
  });
});

describe('boolean settings', () => {
  it('are exactly true, false, 1 or 0', () => {
    expect(['true', '1', 'false', '0'].map(parseBooleanSetting)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    for (const bad of ['yes', 'TRUE', ' 1', '']) {
      expect(refusal(() => parseBooleanSetting(bad))).toEqual({
        reason: 'is not a boolean (true, false, 1 or 0)',
        echoValue: true,
      });
    }
  });
});
