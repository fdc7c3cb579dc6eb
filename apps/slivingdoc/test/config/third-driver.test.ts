/**
 * The goal of the driver registry: adding a store driver is one package (or module) plus one
 * registry line, with no edit to the app's parser, help, scrubbing or store opening. This file
 * adds a third driver (`gcs`, a stand-in kept in memory) by that one line, and drives the real
 * parser, help, scrubber and store opening through it.
 */
import type { StoreConfigBase, StoreDriver, StoreSetting } from '@slivingdoc/store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseInvocation } from '../../src/config/parse';
import { STORE_SECRET_ENV_VARS } from '../../src/config/store-registry';
import type { AppConfig, Refusal } from '../../src/config/types';
import { HELP } from '../../src/help';
import { describeStore } from '../../src/report/store';
import { processScrubber } from '../../src/runtime/scrubber';
import { openStore, probeStore } from '../../src/runtime/store';

interface GcsConfig extends StoreConfigBase {
  kind: 'gcs';
  bucket: string;
  project: string | undefined;
}

vi.mock('../../src/config/store-drivers', async (importOriginal) => {
  const { STORE_DRIVERS } = await importOriginal<typeof import('../../src/config/store-drivers')>();
  const { createMemoryStore, StoreSettingError } = await import('@slivingdoc/store');
  const gcs: StoreDriver<
    GcsConfig,
    { [name: string]: StoreSetting; bucket: StoreSetting<string>; project: StoreSetting<string> }
  > = {
    kind: 'gcs',
    title: 'GCS store',
    selectedBy: { setting: 'bucket', noun: 'a GCS bucket' },
    settings: {
      bucket: {
        flag: 'gcs-bucket',
        env: ['SLIVINGDOC_GCS_BUCKET'],
        placeholder: '<name>',
        help: 'GCS bucket',
        parse: (raw) => {
          if (!/^[a-z0-9-]{3,63}$/.test(raw)) {
            throw new StoreSettingError('is not a valid bucket name', { echoValue: true });
          }
          return raw;
        },
      },
      project: {
        flag: 'gcs-project',
        env: ['GOOGLE_CLOUD_PROJECT'],
        placeholder: '<id>',
        help: 'GCS project',
        parse: (raw) => raw,
      },
    },
    secretEnvVars: ['GCS_TEST_HMAC_SECRET'],
    configure: (values, { prefix }) => ({
      kind: 'gcs',
      bucket: values.bucket!,
      project: values.project,
      prefix,
    }),
    open: async (config) => createMemoryStore({ prefix: config.prefix }),
    describe: (config) => ({ location: `gs://${config.bucket}`, endpoint: null }),
    localDirectory: () => undefined,
  };
  // The one line a contributor adds.
  return { STORE_DRIVERS: { ...STORE_DRIVERS, gcs } };
});

const context = { cwd: '/work/cwd', home: '/home/u' };
const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  parseInvocation(['serve', ...argv], env, context);

async function storeOf(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await parse(argv, env);
  if (result.kind !== 'serve') throw new Error(`expected serve, got ${JSON.stringify(result)}`);
  return (result.config as AppConfig).store;
}
async function reasonOf(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await parse(argv, env);
  if (result.kind !== 'refusal') throw new Error(`expected a refusal, got ${result.kind}`);
  return (result as Refusal).reason;
}

describe('a third store driver added by one registry line', () => {
  afterEach(() => {
    delete process.env.GCS_TEST_HMAC_SECRET;
  });

  it('is selected by its own flag or variable, with its settings parsed', async () => {
    expect(await storeOf(['--gcs-bucket', 'notes', '--gcs-project', 'p1'])).toEqual({
      kind: 'gcs',
      bucket: 'notes',
      project: 'p1',
      prefix: 'slivingdoc',
    });
    expect(
      await storeOf([], { SLIVINGDOC_GCS_BUCKET: 'envnotes', GOOGLE_CLOUD_PROJECT: 'p2' }),
    ).toMatchObject({ kind: 'gcs', bucket: 'envnotes', project: 'p2' });
    // The other drivers are untouched.
    expect((await storeOf([])).kind).toBe('embedded');
    expect((await storeOf(['--bucket', 'b1b'], { GOOGLE_CLOUD_PROJECT: 'p' })).kind).toBe('s3');
  });

  it('refuses its values and its flags without it, and the others’ flags with it', async () => {
    expect(await reasonOf(['--gcs-bucket', 'BAD'])).toBe(
      '--gcs-bucket: "BAD" is not a valid bucket name',
    );
    expect(await reasonOf(['--gcs-project', 'p'])).toBe(
      '--gcs-project needs a GCS bucket (--gcs-bucket)',
    );
    expect(await reasonOf(['--gcs-bucket', 'notes', '--store-dir', '/s'])).toBe(
      '--store-dir applies only to the embedded store, not with --gcs-bucket',
    );
    expect(await reasonOf(['--gcs-bucket', 'notes', '--region', 'eu'])).toBe(
      '--region applies only to the S3 store, not with --gcs-bucket',
    );
    // Two selected drivers: the first registered wins, the other's flag is refused.
    expect(await reasonOf(['--bucket', 'b1b', '--gcs-bucket', 'notes'])).toBe(
      '--gcs-bucket applies only to the GCS store, not with --bucket',
    );
    expect(await reasonOf(['--gcs-bucket='])).toBe('--gcs-bucket: empty value');
  });

  it('appears in help beside the others', () => {
    expect(HELP).toContain(`
  --bucket <name>                 S3 bucket (SLIVINGDOC_BUCKET); none: the embedded store
  --gcs-bucket <name>             GCS bucket (SLIVINGDOC_GCS_BUCKET); none: the embedded store
  --prefix <prefix>               key prefix (SLIVINGDOC_PREFIX), default slivingdoc; --prefix= is the bucket root
`);
    expect(HELP).toContain(`
  --store-dir <dir>               embedded store directory (SLIVINGDOC_STORE_DIR)
  --gcs-project <id>              GCS project (GOOGLE_CLOUD_PROJECT), needs --gcs-bucket
`);
  });

  it('has its secret variable scrubbed, beside the AWS ones', () => {
    expect(STORE_SECRET_ENV_VARS).toEqual([
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'GCS_TEST_HMAC_SECRET',
    ]);
    process.env.GCS_TEST_HMAC_SECRET = 'gcs-hmac-secret-value';
    const scrubber = processScrubber();
    expect(scrubber.text('signed with gcs-hmac-secret-value')).toBe('signed with [redacted]');
  });

  it('opens, probes and describes its store through the app', async () => {
    const config = await storeOf(['--gcs-bucket', 'notes']);
    const store = await openStore(config);
    await probeStore(store);
    expect(await store.get('current')).toBeUndefined();
    expect(describeStore(config, String)).toEqual({
      kind: 'gcs',
      location: 'gs://notes',
      endpoint: null,
      prefix: 'slivingdoc',
    });
  });
});
