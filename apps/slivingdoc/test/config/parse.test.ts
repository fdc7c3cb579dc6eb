import { describe, expect, it } from 'vitest';
import { parseInvocation } from '../../src/config/parse';
import type { AppConfig, Invocation, Refusal } from '../../src/config/types';

const context = { cwd: '/work/cwd', home: '/home/u' };
const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseInvocation(argv, env, context);

async function refusal(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Refusal> {
  const result = await parse(argv, env);
  if (result.kind !== 'refusal') throw new Error(`expected a refusal, got ${result.kind}`);
  return result;
}
async function config(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<AppConfig> {
  const result = await parse(argv, env);
  if (result.kind === 'refusal') throw new Error(`refused: ${result.what} — ${result.reason}`);
  if (!('config' in result)) throw new Error(`no config for ${result.kind}`);
  return result.config;
}
const s3 = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const { store } = await config(['serve', '--bucket', 'notes', ...argv], env);
  if (store.kind !== 's3') throw new Error('expected s3');
  return store;
};

describe('commands and usage', () => {
  it.each([
    ['serve', 'serve'],
    ['s', 'serve'],
    ['version', 'version'],
    ['v', 'version'],
  ])('%s is %s', async (command, kind) => {
    expect((await parse([command])).kind).toBe(kind);
  });

  it('pull and commit take their aliases and one path, before or after the flags', async () => {
    expect(await parse(['p', 'nb'])).toMatchObject({ kind: 'pull', path: '/work/cwd/nb' });
    expect(await parse(['pull', '--prefix', 'x', '/abs/nb'])).toMatchObject({ path: '/abs/nb' });
    expect(await parse(['c', '/abs/nb', '-m', 'msg'])).toMatchObject({
      kind: 'commit',
      path: '/abs/nb',
      message: 'msg',
    });
    expect(await parse(['commit', '--message=hi', '../x'])).toMatchObject({
      path: '/work/x',
      message: 'hi',
    });
  });

  it('a commit message is kept as given, including one that starts with a dash', async () => {
    expect(await parse(['commit', 'nb', '--message=-x  y\n'])).toMatchObject({
      message: '-x  y\n',
    });
    expect(await parse(['commit', 'nb', '-m-x'])).toMatchObject({ message: '-x' });
  });

  it('-h and --help print help wherever they appear after the command', async () => {
    for (const [argv, command] of [
      [['-h'], undefined],
      [['--help'], undefined],
      [['serve', '-h'], 'serve'],
      [['pull', 'x', '--help'], 'pull'],
      [['log', '--help'], 'log'],
      [['v', '-h'], 'version'],
    ] as const) {
      expect(await parse([...argv])).toEqual(
        command === undefined ? { kind: 'help' } : { kind: 'help', command },
      );
    }
  });

  it.each([
    [[], /no command/],
    [['serv'], /unknown command "serv"/],
    [['--bucket', 'x'], /unknown command/],
    [['version', 'extra'], /version takes no arguments/],
    [['version', '--bucket', 'b'], /version takes no arguments/],
    [['pull'], /exactly one path \(got 0\)/],
    [['pull', 'a', 'b'], /exactly one path \(got 2\)/],
    [['commit', '-m', 'x'], /exactly one path/],
    [['commit', 'nb'], /needs -m/],
    [['pull', 'nb', '-m', 'x'], /only to commit/],
    [['serve', 'nb'], /serve takes no path/],
    [['pull', ''], /path is empty/],
    [['serve', '--nope'], /unknown option --nope/],
    [['serve', '--bucket'], /--bucket needs a value/],
    [['serve', '--bucket', '--prefix', 'x'], /--bucket needs a value/],
    [['commit', 'nb', '-m', '-x'], /-m needs a value/],
    [['serve', '--help=1'], /takes no value/],
  ])('%j is a usage refusal (exit 2)', async (argv, reason) => {
    const r = await refusal(argv);
    expect(r.what).toBe('usage');
    expect(r.exitCode).toBe(2);
    expect(r.reason).toMatch(reason);
    expect(r.reason).not.toContain('\n');
  });

  it('an unknown option never echoes its value', async () => {
    expect((await refusal(['serve', '--secret=hunter2'])).reason).not.toContain('hunter2');
  });
});

describe('defaults', () => {
  it('serve with nothing configured: embedded store, session directory, contract defaults', async () => {
    expect(await config(['serve'])).toEqual({
      store: {
        kind: 'embedded',
        dir: '/home/u/.local/share/slivingdoc/store',
        prefix: 'slivingdoc',
      },
      workspaceRoot: undefined,
      privateRoot: undefined,
      writable: [],
      readOnly: [],
      commitRetries: 8,
      checkpointPacks: 256,
      retainedCheckpoints: 1,
      mergeAdditions: 'keep',
    });
  });

  it('pull: the workspace root is the path itself, the private root the XDG cache', async () => {
    expect(await config(['pull', 'nb'])).toMatchObject({
      workspaceRoot: '/work/cwd/nb',
      privateRoot: '/home/u/.cache/slivingdoc',
    });
  });

  it('XDG directories are honoured when absolute and ignored when relative', async () => {
    const env = { XDG_DATA_HOME: '/data', XDG_CACHE_HOME: '/cache' };
    expect(await config(['pull', '/nb'], env)).toMatchObject({
      store: { dir: '/data/slivingdoc/store' },
      privateRoot: '/cache/slivingdoc',
    });
    expect(
      await config(['pull', '/nb'], { XDG_DATA_HOME: 'rel', XDG_CACHE_HOME: '' }),
    ).toMatchObject({
      store: { dir: '/home/u/.local/share/slivingdoc/store' },
      privateRoot: '/home/u/.cache/slivingdoc',
    });
  });

  it('serve with a workspace root but no private root uses the XDG cache', async () => {
    expect(await config(['serve', '--workspace-root', '/w'])).toMatchObject({
      workspaceRoot: '/w',
      privateRoot: '/home/u/.cache/slivingdoc',
    });
  });

  it('serve without a workspace root keeps an explicit private root', async () => {
    expect(await config(['serve', '--private-root', '/p'])).toMatchObject({
      workspaceRoot: undefined,
      privateRoot: '/p',
    });
  });
});

describe('precedence', () => {
  it('flags override environment, which overrides defaults', async () => {
    const env = { SLIVINGDOC_PREFIX: 'fromenv', SLIVINGDOC_COMMIT_RETRIES: '3' };
    expect(await config(['serve'], env)).toMatchObject({
      store: { prefix: 'fromenv' },
      commitRetries: 3,
    });
    expect(await config(['serve', '--prefix', 'flag', '--commit-retries=4'], env)).toMatchObject({
      store: { prefix: 'flag' },
      commitRetries: 4,
    });
  });

  it('an empty environment value counts as unset', async () => {
    const env = {
      SLIVINGDOC_PREFIX: '',
      SLIVINGDOC_BUCKET: '',
      SLIVINGDOC_COMMIT_RETRIES: '',
      SLIVINGDOC_WRITABLE: '',
      SLIVINGDOC_WORKSPACE_ROOT: '',
    };
    expect(await config(['serve'], env)).toMatchObject({
      store: { kind: 'embedded', prefix: 'slivingdoc' },
      commitRetries: 8,
      writable: [],
      workspaceRoot: undefined,
    });
  });

  it('the last occurrence of a scalar flag wins', async () => {
    expect(await config(['serve', '--prefix', 'a', '--prefix=b'])).toMatchObject({
      store: { prefix: 'b' },
    });
    expect(
      await config(['serve', '--retained-checkpoints=5', '--retained-checkpoints', '0']),
    ).toMatchObject({ retainedCheckpoints: 0 });
  });

  it('--merge-additions defaults to keep; the flag beats SLIVINGDOC_MERGE_ADDITIONS', async () => {
    expect(await config(['serve'])).toMatchObject({ mergeAdditions: 'keep' });
    expect(await config(['serve'], { SLIVINGDOC_MERGE_ADDITIONS: '' })).toMatchObject({
      mergeAdditions: 'keep',
    });
    const env = { SLIVINGDOC_MERGE_ADDITIONS: 'conflict' };
    expect(await config(['pull', 'nb'], env)).toMatchObject({ mergeAdditions: 'conflict' });
    expect(await config(['commit', 'nb', '-m', 'x', '--merge-additions=keep'], env)).toMatchObject({
      mergeAdditions: 'keep',
    });
    expect(
      await config(['serve', '--merge-additions=keep', '--merge-additions', 'conflict']),
    ).toMatchObject({ mergeAdditions: 'conflict' });
  });

  it('--prefix= selects the bucket root; an empty SLIVINGDOC_PREFIX does not', async () => {
    expect(await config(['serve', '--prefix='])).toMatchObject({ store: { prefix: '' } });
    expect(await config(['serve'], { SLIVINGDOC_PREFIX: '' })).toMatchObject({
      store: { prefix: 'slivingdoc' },
    });
  });

  it('list flags are repeatable, :-separated, and replace the environment list entirely', async () => {
    const env = { SLIVINGDOC_WRITABLE: 'a:b', SLIVINGDOC_READ_ONLY: 'docs' };
    expect(await config(['serve'], env)).toMatchObject({
      writable: ['a', 'b'],
      readOnly: ['docs'],
    });
    expect(await config(['serve', '--writable', 'c', '--writable=d:e'], env)).toMatchObject({
      writable: ['c', 'd', 'e'],
      readOnly: ['docs'],
    });
  });

  it('the workspace and private roots come from the environment and resolve ~/ and relatives', async () => {
    const env = { SLIVINGDOC_WORKSPACE_ROOT: '~/w', SLIVINGDOC_PRIVATE_ROOT: 'priv' };
    expect(await config(['serve'], env)).toMatchObject({
      workspaceRoot: '/home/u/w',
      privateRoot: '/work/cwd/priv',
    });
    expect(await config(['pull', '/home/u/w/x', '--workspace-root', '/home/u/w'])).toMatchObject({
      workspaceRoot: '/home/u/w',
    });
  });
});

describe('bad values: one refusal each, exit 2', () => {
  it.each([
    [['--bucket', 'Bad_Bucket'], /--bucket: "Bad_Bucket" is not a valid bucket name/],
    [['--bucket', 'ab'], /not a valid bucket name/],
    [['--bucket', 'a..b'], /not a valid bucket name/],
    [['--prefix', '/lead'], /--prefix: "\/lead" starts or ends with \//],
    [['--prefix', 'trail/'], /starts or ends with/],
    [['--prefix', 'a//b'], /empty, \. or \.\. segment/],
    [['--prefix', 'a/../b'], /empty, \. or \.\. segment/],
    [['--prefix', 'a\\b'], /backslash/],
    [['--prefix', 'a\tb'], /control character/],
    [['--bucket=b1b', '--region', 'us east'], /--region: "us east" is not a valid region/],
    [['--bucket=b1b', '--endpoint', 'ftp://h'], /--endpoint: the scheme must be http or https/],
    [['--bucket=b1b', '--endpoint', 'localhost:9000/x'], /--endpoint: the scheme must be/],
    [['--bucket=b1b', '--endpoint', 'not a url'], /--endpoint: not an absolute URL/],
    [['--bucket=b1b', '--endpoint', 'http://h/?x=1'], /query is not allowed/],
    [['--bucket=b1b', '--endpoint', 'http://h/?'], /query is not allowed/],
    [['--bucket=b1b', '--endpoint', 'http://h/#f'], /fragment is not allowed/],
    [['--bucket=b1b', '--path-style', 'yes'], /--path-style: "yes" is not a boolean/],
    [['--commit-retries', '101'], /--commit-retries: "101" is not an integer 0–100/],
    [['--commit-retries', '-1'], /--commit-retries needs a value/],
    [['--commit-retries', '1e2'], /is not an integer/],
    [['--commit-retries', ' 5'], /is not an integer/],
    [['--checkpoint-packs', '0'], /--checkpoint-packs: "0" is not an integer at least 1/],
    [['--checkpoint-packs', '99999999999999999999'], /is not an integer at least 1/],
    [['--retained-checkpoints', '65'], /is not an integer 0–64/],
    [['--merge-additions', 'union'], /--merge-additions: "union" is not keep or conflict/],
    [['--merge-additions', 'Keep'], /is not keep or conflict/],
    [['--writable', 'a::b'], /--writable: "a::b" has an empty list item/],
    [['--read-only', ':a'], /--read-only: ":a" has an empty list item/],
    [['--store-dir', 'a\u0000b'], /--store-dir: the path contains U\+0000/],
  ])('serve %j', async (argv, reason) => {
    const r = await refusal(['serve', ...argv]);
    expect(r).toMatchObject({ what: expect.stringMatching(/usage|configuration/), exitCode: 2 });
    expect(r.reason).toMatch(reason);
  });

  it.each([
    'bucket',
    'region',
    'endpoint',
    'path-style',
    'store-dir',
    'workspace-root',
    'private-root',
    'writable',
    'read-only',
    'commit-retries',
    'checkpoint-packs',
    'retained-checkpoints',
    'merge-additions',
  ])('an empty --%s is an error', async (flag) => {
    const r = await refusal(['serve', '--bucket=b1b', `--${flag}=`]);
    expect(r).toMatchObject({ what: 'configuration', reason: `--${flag}: empty value` });
  });

  it('an empty -m is an error too', async () => {
    expect(await refusal(['commit', 'nb', '-m', ''])).toMatchObject({ reason: '-m: empty value' });
  });

  it.each([
    ['SLIVINGDOC_COMMIT_RETRIES', 'x', /SLIVINGDOC_COMMIT_RETRIES: "x" is not an integer/],
    ['SLIVINGDOC_CHECKPOINT_PACKS', '0', /SLIVINGDOC_CHECKPOINT_PACKS: "0"/],
    ['SLIVINGDOC_RETAINED_CHECKPOINTS', '100', /SLIVINGDOC_RETAINED_CHECKPOINTS/],
    ['SLIVINGDOC_MERGE_ADDITIONS', 'both', /SLIVINGDOC_MERGE_ADDITIONS: "both" is not keep/],
    ['SLIVINGDOC_WRITABLE', 'a:', /SLIVINGDOC_WRITABLE: "a:" has an empty list item/],
    ['SLIVINGDOC_READ_ONLY', 'a::b', /SLIVINGDOC_READ_ONLY/],
    ['SLIVINGDOC_PREFIX', '/x', /SLIVINGDOC_PREFIX/],
    ['SLIVINGDOC_BUCKET', 'UPPER', /SLIVINGDOC_BUCKET: "UPPER" is not a valid bucket name/],
  ])('a bad %s is refused and named', async (name, value, reason) => {
    expect((await refusal(['serve'], { [name]: value })).reason).toMatch(reason);
  });
});

describe('S3 settings', () => {
  it('a bucket selects S3; path style follows the endpoint unless set', async () => {
    expect(await s3([])).toEqual({
      kind: 's3',
      bucket: 'notes',
      prefix: 'slivingdoc',
      region: undefined,
      endpoint: undefined,
      pathStyle: false,
    });
    expect(await s3(['--endpoint', 'http://127.0.0.1:7480'])).toMatchObject({ pathStyle: true });
    expect(await s3(['--endpoint', 'http://h', '--path-style', 'false'])).toMatchObject({
      pathStyle: false,
    });
    expect(await s3(['--path-style=1'])).toMatchObject({ pathStyle: true });
    expect(
      await s3([], { SLIVINGDOC_PATH_STYLE: '0', AWS_ENDPOINT_URL: 'http://h' }),
    ).toMatchObject({
      pathStyle: false,
    });
  });

  it('the bucket may come from the environment', async () => {
    expect((await config(['serve'], { SLIVINGDOC_BUCKET: 'envbucket' })).store).toMatchObject({
      kind: 's3',
      bucket: 'envbucket',
    });
  });

  it('endpoint resolution: flag, then AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL', async () => {
    const env = { AWS_ENDPOINT_URL_S3: 'http://s3only', AWS_ENDPOINT_URL: 'http://generic' };
    expect((await s3(['--endpoint', 'http://flag'], env)).endpoint).toBe('http://flag');
    expect((await s3([], env)).endpoint).toBe('http://s3only');
    expect((await s3([], { AWS_ENDPOINT_URL: 'http://generic' })).endpoint).toBe('http://generic');
    expect((await s3([], { AWS_ENDPOINT_URL_S3: '', AWS_ENDPOINT_URL: 'http://g' })).endpoint).toBe(
      'http://g',
    );
  });

  it.each([
    ['HTTP://LocalHost:7480/', 'http://localhost:7480'],
    ['https://S3.Example.COM', 'https://s3.example.com'],
    ['http://h:80/', 'http://h'],
    ['http://h/Base/Path//', 'http://h/Base/Path'],
    ['http://[::1]:9000', 'http://[::1]:9000'],
  ])('endpoint %s is normalised to %s', async (raw, normalised) => {
    expect((await s3(['--endpoint', raw])).endpoint).toBe(normalised);
  });

  it('an endpoint with user info is refused without echoing the secret', async () => {
    for (const endpoint of [
      'http://AKIAEXAMPLE:s3cr3t@host:9000',
      'http://tok3n@host',
      'http://AKIAEXAMPLE:s3cr3t/with/slashes@host',
    ]) {
      const viaFlag = await refusal(['serve', '--bucket=b1b', '--endpoint', endpoint]);
      const viaEnv = await refusal(['serve', '--bucket=b1b'], { AWS_ENDPOINT_URL_S3: endpoint });
      for (const r of [viaFlag, viaEnv]) {
        expect(r.what).toBe('configuration');
        expect(r.reason).toMatch(/user info is not allowed/);
        expect(r.reason).not.toMatch(/s3cr3t|AKIA|tok3n|host/);
      }
    }
  });

  it('region: flag, then AWS_REGION, else left to the SDK', async () => {
    expect((await s3(['--region', 'eu-west-1'], { AWS_REGION: 'us-west-2' })).region).toBe(
      'eu-west-1',
    );
    expect((await s3([], { AWS_REGION: 'us-west-2' })).region).toBe('us-west-2');
    expect((await s3([])).region).toBeUndefined();
  });

  it.each([
    ['--region', 'eu-west-1'],
    ['--endpoint', 'http://h'],
    ['--path-style', 'true'],
  ])('%s without a bucket is an error', async (flag, value) => {
    expect(await refusal(['serve', flag, value])).toMatchObject({
      what: 'configuration',
      reason: `${flag} needs a bucket (--bucket)`,
    });
  });

  it('S3-only environment variables are ignored without a bucket, even when invalid', async () => {
    const env = {
      AWS_REGION: 'bad region',
      AWS_ENDPOINT_URL_S3: 'ftp://x',
      AWS_ENDPOINT_URL: 'http://u:p@h',
      SLIVINGDOC_PATH_STYLE: 'maybe',
    };
    expect((await config(['serve'], env)).store.kind).toBe('embedded');
  });

  it('--store-dir with a bucket is refused; SLIVINGDOC_STORE_DIR is then ignored', async () => {
    expect((await refusal(['serve', '--bucket=b1b', '--store-dir', '/s'])).reason).toMatch(
      /--store-dir applies only to the embedded store/,
    );
    expect(
      (await config(['serve', '--bucket=b1b'], { SLIVINGDOC_STORE_DIR: '/s' })).store.kind,
    ).toBe('s3');
  });

  it('an invalid S3 environment variable is refused when a bucket is set', async () => {
    expect(
      (await refusal(['serve', '--bucket=b1b'], { AWS_ENDPOINT_URL: 'ftp://h' })).reason,
    ).toMatch(/^AWS_ENDPOINT_URL: the scheme/);
    expect(
      (await refusal(['serve', '--bucket=b1b'], { SLIVINGDOC_PATH_STYLE: 'on' })).reason,
    ).toMatch(/^SLIVINGDOC_PATH_STYLE: "on" is not a boolean/);
  });
});

describe('path sets', () => {
  it('are normalised, deduplicated and sorted by the policy', async () => {
    expect(
      await config(['serve', '--writable', 'notes/:./b:notes', '--read-only=docs//x']),
    ).toMatchObject({
      writable: ['b', 'notes'],
      readOnly: ['docs/x'],
    });
  });

  it('an entry in both sets is refused', async () => {
    const r = await refusal(['serve', '--writable', 'a:notes', '--read-only', 'notes/']);
    expect(r).toMatchObject({ what: 'configuration', exitCode: 2 });
    expect(r.reason).toMatch(/^path sets: "notes" is in both the writable and the read-only set/);
    const viaEnv = await refusal(['serve'], {
      SLIVINGDOC_WRITABLE: 'x',
      SLIVINGDOC_READ_ONLY: 'x',
    });
    expect(viaEnv.reason).toMatch(/in both/);
  });

  it.each([['/abs'], ['a/../b'], ['con.md'], ['a\\b']])('entry %j is refused', async (entry) => {
    expect((await refusal(['serve', '--read-only', entry])).reason).toMatch(/^path sets: /);
  });
});

describe('overlapping directories', () => {
  it.each([
    [
      ['pull', '/w', '--private-root', '/w/p'],
      /private root \/\S* and the workspace root \/\S* overlap/,
    ],
    [
      ['pull', '/w/nb', '--private-root', '/w'],
      /private root \/\S* and the workspace root \/\S* overlap/,
    ],
    [
      ['pull', '/w', '--private-root', '/w'],
      /private root \/\S* and the workspace root \/\S* overlap/,
    ],
    [
      ['serve', '--workspace-root=/w', '--private-root=/w/.p'],
      /private root \/\S* and the workspace/,
    ],
    [['pull', '/home/u'], /private root \/\S* and the workspace root \/\S* overlap/],
    [
      ['pull', '/w', '--store-dir', '/w/s', '--private-root=/p'],
      /store directory \/\S* and the workspace/,
    ],
    [
      ['pull', '/home/u/.local', '--private-root=/p'],
      /store directory \/\S* and the workspace root/,
    ],
  ])('%j is refused', async (argv, reason) => {
    expect(await refusal(argv)).toMatchObject({
      what: 'configuration',
      reason: expect.stringMatching(reason),
    });
  });

  it('a sibling whose name starts with the root is not inside it', async () => {
    expect(
      await config(['pull', '/w', '--private-root', '/w-private', '--store-dir=/w..s']),
    ).toMatchObject({
      privateRoot: '/w-private',
    });
  });

  it('with a bucket the store directory does not matter', async () => {
    expect(
      (await config(['pull', '/home/u/.local', '--bucket=b1b', '--private-root=/p'])).store.kind,
    ).toBe('s3');
  });
});

describe('the refusal shape', () => {
  it('is what the CLI renders: what, reason, exit code', async () => {
    const r: Invocation | Refusal = await parse(['serve', '--commit-retries=x']);
    expect(r).toEqual({
      kind: 'refusal',
      what: 'configuration',
      reason: '--commit-retries: "x" is not an integer 0–100',
      exitCode: 2,
    });
  });
});

describe('serve --listen and token', () => {
  it('--listen takes HOST:PORT or [IPv6]:PORT, from the flag or SLIVINGDOC_LISTEN, with defaults', async () => {
    expect((await config(['serve', '--listen', '127.0.0.1:7077'])).listen).toEqual({
      host: '127.0.0.1',
      port: 7077,
      public: false,
      allowedOrigins: [],
      maxSessions: 256,
      idleTimeoutMs: 300_000,
      maxCallsPerToken: 16,
      tokenFile: undefined,
    });
    expect((await config(['serve'], { SLIVINGDOC_LISTEN: '[::1]:0' })).listen).toMatchObject({
      host: '::1',
      port: 0,
    });
    expect((await config(['serve'])).listen).toBeUndefined();
  });

  it('the HTTP settings and the token file come from flags and the environment', async () => {
    const listen = (
      await config(
        [
          'serve',
          '--listen',
          'localhost:1',
          '--listen-public',
          '--allow-origin',
          'http://a.example:8080',
        ],
        {
          SLIVINGDOC_MAX_SESSIONS: '3',
          SLIVINGDOC_SESSION_IDLE_TIMEOUT: '2',
          SLIVINGDOC_TOKEN_CALLS: '1',
          SLIVINGDOC_TOKEN_FILE: '~/t.json',
          XDG_CONFIG_HOME: '/cfg',
        },
      )
    ).listen;
    expect(listen).toMatchObject({
      public: true,
      allowedOrigins: ['http://a.example:8080'],
      maxSessions: 3,
      idleTimeoutMs: 2000,
      maxCallsPerToken: 1,
      tokenFile: '/home/u/t.json',
    });
    // Without SLIVINGDOC_TOKEN_FILE the commands resolve the config directory themselves.
    expect(
      (await config(['serve', '--listen', 'h:1'], { XDG_CONFIG_HOME: '/cfg' })).listen?.tokenFile,
    ).toBeUndefined();
  });

  it.each([
    [['serve', '--listen', '7077'], /is not HOST:PORT/],
    [['serve', '--listen', 'h:70000'], /is not HOST:PORT/],
    [['serve', '--listen', '::1:80'], /is not HOST:PORT/],
    [['serve', '--max-sessions', '3'], /--max-sessions needs --listen/],
    [['serve', '--listen-public'], /--listen-public needs --listen/],
    [['serve', '--listen', 'h:1', '--max-sessions', '0'], /not an integer 1–100000/],
    [['serve', '--listen', 'h:1', '--allow-origin', 'http://a/x'], /is not an origin/],
    [['pull', 'nb', '--listen', 'h:1'], /--listen applies only to serve/],
    [['token', 'add', '.hidden'], /token name/],
    [['token', 'add', 'a+2'], /token name/],
    [['token', 'add', 'x', '--writable', '../up'], /path sets/],
    [['token', 'list', 'x'], /token list takes no arguments/],
    [['token', 'remove', 'x', '--read-only'], /token remove takes only a NAME/],
    [['token'], /token needs add NAME, list or remove NAME/],
  ])('%j is refused', async (argv, reason) => {
    expect((await refusal(argv)).reason).toMatch(reason);
  });

  it('token add reads its own switches: --read-only is a switch here, path lists split on :', async () => {
    expect(
      await parse([
        'token',
        'add',
        'scribe',
        '--read-only',
        '--writable',
        'b:a',
        '--read-only-paths',
        'a/x',
      ]),
    ).toEqual({
      kind: 'token',
      command: {
        kind: 'token',
        action: 'add',
        name: 'scribe',
        readOnly: true,
        writable: ['a', 'b'],
        readOnlyPaths: ['a/x'],
        reviewer: false,
      },
      tokenFile: undefined,
    });
    expect(await parse(['token', 'add', 'ann', '--reviewer'])).toMatchObject({
      command: { reviewer: true },
    });
    expect(await parse(['token', 'add', 'intern', '--review', 'queue'])).toMatchObject({
      command: { review: 'queue' },
    });
    expect(await parse(['token', 'add', 'intern', '--review', 'direct'])).toMatchObject({
      kind: 'refusal',
      what: 'usage',
    });
    expect(await parse(['token', 'remove', 'scribe'])).toMatchObject({
      command: { action: 'remove', name: 'scribe' },
    });
  });
});

describe('review and proposals', () => {
  it('review set takes a mode, --actor as the rule actor and --paths as a list', async () => {
    expect(
      await parse(['review', 'set', 'queue', '--actor', 'bot', '--paths', 'decisions:notes']),
    ).toMatchObject({
      kind: 'review',
      action: 'set',
      mode: 'queue',
      ruleActor: 'bot',
      paths: ['decisions', 'notes'],
    });
    expect(await parse(['review', 'show', '--json'])).toMatchObject({ action: 'show', json: true });
    for (const bad of [
      ['review', 'set', 'audit'],
      ['review', 'set'],
      ['review', 'show', '--paths', 'x'],
      ['review', 'set', 'queue', '--reason', 'x'],
    ])
      expect(await parse(bad)).toMatchObject({ kind: 'refusal', what: 'usage' });
  });

  it('proposals: list, show ID, reject ID --reason, approve ID [PATH] --revision N', async () => {
    expect(await parse(['proposals', 'list', '--json'])).toMatchObject({
      kind: 'proposals',
      action: 'list',
      json: true,
    });
    expect(await parse(['proposals', 'reject', 'abc', '--reason', 'no'])).toMatchObject({
      action: 'reject',
      id: 'abc',
      reason: 'no',
    });
    expect(await parse(['proposals', 'approve', 'abc', '--revision', '3'])).toMatchObject({
      kind: 'approve',
      id: 'abc',
      revision: 3,
    });
    for (const bad of [
      ['proposals', 'approve'],
      ['proposals', 'show'],
      ['proposals', 'list', 'x'],
      ['proposals', 'show', 'abc', '--revision', '2'],
      ['proposals', 'approve', 'abc', '--reason', 'x'],
    ])
      expect(await parse(bad)).toMatchObject({ kind: 'refusal', what: 'usage' });
    expect(await parse(['proposals', 'approve', 'abc', '--revision', '0'])).toMatchObject({
      kind: 'refusal',
    });
  });
});

describe('blame and view', () => {
  it('blame takes a path and a notebook file, or a file inside the path', async () => {
    expect(await parse(['blame', 'nb', 'notes/a.md', '--json'])).toMatchObject({
      kind: 'blame',
      path: '/work/cwd/nb',
      file: 'notes/a.md',
      json: true,
    });
    expect(await parse(['blame', '/abs/nb', '/abs/nb/sub/b.md'])).toMatchObject({
      file: 'sub/b.md',
      json: false,
    });
    expect(await parse(['blame', '/work/cwd', './c.md'])).toMatchObject({ file: 'c.md' });
    expect(await refusal(['blame', 'nb'])).toMatchObject({ what: 'usage', exitCode: 2 });
    expect(await refusal(['blame', 'nb', 'a', 'b'])).toMatchObject({ what: 'usage' });
    expect(await refusal(['log', 'nb', '--listen', '127.0.0.1:1'])).toMatchObject({
      what: 'usage',
    });
  });

  it('view needs --listen HOST:PORT (flag or SLIVINGDOC_LISTEN) and takes no path', async () => {
    expect(await parse(['view', '--listen', '127.0.0.1:8080'])).toMatchObject({
      kind: 'view',
      listen: { host: '127.0.0.1', port: 8080 },
      // The default token file is resolved when the view starts (runtime/token-file.ts).
      tokenFile: undefined,
    });
    expect(
      await parse(['view', '--listen', '127.0.0.1:8080'], { SLIVINGDOC_TOKEN_FILE: 't.json' }),
    ).toMatchObject({ tokenFile: '/work/cwd/t.json' });
    expect(await parse(['view'], { SLIVINGDOC_LISTEN: '[::1]:0' })).toMatchObject({
      listen: { port: 0 },
    });
    expect(await refusal(['view'])).toMatchObject({ what: 'usage', exitCode: 2 });
    expect(await refusal(['view', 'nb', '--listen', '127.0.0.1:1'])).toMatchObject({
      what: 'usage',
    });
    expect((await refusal(['view', '--listen', 'nowhere'])).exitCode).toBe(2);
  });
});
