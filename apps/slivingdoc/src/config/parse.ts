import { type ParseArgsConfig, parseArgs } from 'node:util';
import { createPathPolicy, PathSetError } from '@slivingdoc/policy';
import { defaultPrivateRoot, defaultStoreDir, overlaps } from './paths';
import { configuration, RefusalError, usage } from './refusal';
import type { AppConfig, Invocation, ParseContext, Refusal, StoreConfig } from './types';
import {
  normaliseEndpoint,
  parseBoolean,
  parseInteger,
  quote,
  resolveUserPath,
  splitList,
  validateBucket,
  validatePrefix,
  validateRegion,
} from './values';

const COMMANDS = {
  serve: 'serve',
  s: 'serve',
  pull: 'pull',
  p: 'pull',
  commit: 'commit',
  c: 'commit',
  version: 'version',
  v: 'version',
} as const;
type Command = (typeof COMMANDS)[keyof typeof COMMANDS];

/** Every option of SPEC §12, plus `-m` (commit) and `-h`. */
const OPTIONS = {
  bucket: { type: 'string' },
  prefix: { type: 'string' },
  region: { type: 'string' },
  endpoint: { type: 'string' },
  'path-style': { type: 'string' },
  'store-dir': { type: 'string' },
  'workspace-root': { type: 'string' },
  'private-root': { type: 'string' },
  writable: { type: 'string', multiple: true },
  'read-only': { type: 'string', multiple: true },
  'commit-retries': { type: 'string' },
  'checkpoint-packs': { type: 'string' },
  'retained-checkpoints': { type: 'string' },
  message: { type: 'string', short: 'm' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

type Flags = ReturnType<typeof parseFlags>['values'];

/** Options that only make sense with a bucket: refused without one (SPEC §12). */
const S3_ONLY_FLAGS = ['region', 'endpoint', 'path-style'] as const;

/**
 * Parses a command line and environment into what to run, or a refusal.
 * Pure: reads nothing but its arguments, touches no file, so every rule is unit-testable.
 */
export function parseInvocation(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  context: ParseContext,
): Invocation | Refusal {
  try {
    return parseOrThrow(argv, env, context);
  } catch (error) {
    if (error instanceof RefusalError) return error.toRefusal();
    throw error;
  }
}

function parseOrThrow(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  context: ParseContext,
): Invocation {
  const [first, ...rest] = argv;
  if (first === '-h' || first === '--help') return { kind: 'help' };
  if (first === undefined) throw usage('no command given (serve, pull, commit or version)');
  const command: Command | undefined = Object.hasOwn(COMMANDS, first)
    ? COMMANDS[first as keyof typeof COMMANDS]
    : undefined;
  if (command === undefined) {
    throw usage(`unknown command ${quote(first)} (serve, pull, commit or version)`);
  }
  const { values: flags, positionals, tokens } = parseFlags(rest);
  if (flags.help) return { kind: 'help' };
  if (command === 'version') {
    if (rest.length > 0) throw usage('version takes no arguments');
    return { kind: 'version' };
  }
  for (const token of tokens) {
    if (token.kind === 'option' && token.value === '' && token.name !== 'prefix') {
      throw configuration(`${token.rawName}: empty value`);
    }
  }
  if (command !== 'commit' && flags.message !== undefined) {
    throw usage(`-m/--message applies only to commit`);
  }
  if (command === 'serve') {
    if (positionals.length > 0) throw usage('serve takes no path');
    return { kind: 'serve', config: buildConfig(flags, env, context, undefined) };
  }
  if (positionals.length !== 1) {
    throw usage(`${command} takes exactly one path (got ${positionals.length})`);
  }
  const rawPath = positionals[0]!;
  if (rawPath === '') throw usage(`${command}: the path is empty`);
  const path = resolveUserPath('path', rawPath, context.cwd, context.home);
  const config = buildConfig(flags, env, context, path);
  if (command === 'pull') return { kind: 'pull', path, config };
  if (flags.message === undefined) throw usage('commit needs -m <message>');
  return { kind: 'commit', path, message: flags.message, config };
}

function parseFlags(args: string[]) {
  try {
    return parseArgs({
      args,
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw usage(describeParseError(error));
  }
}

/** node:util's messages span lines and may quote a value; keep the option name only. */
function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const option = /option '([^' =]+)/i.exec(message)?.[1] ?? 'an option';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return message.includes('does not take an argument')
        ? `${option} takes no value`
        : `${option} needs a value (use ${option}=<value> for a value starting with -)`;
    default:
      return 'cannot parse the command line';
  }
}

/** SPEC §12: an empty environment value counts as unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** A scalar setting: the flag (last occurrence) wins over the environment. */
function pick(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  flag: keyof typeof OPTIONS,
  envName: string,
): { source: string; raw: string } | undefined {
  const fromFlag = flags[flag];
  if (typeof fromFlag === 'string') return { source: `--${flag}`, raw: fromFlag };
  const fromEnv = envValue(env, envName);
  return fromEnv === undefined ? undefined : { source: envName, raw: fromEnv };
}

/** A list setting: any occurrence of the flag replaces the environment's list entirely. */
function pickList(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  flag: 'writable' | 'read-only',
  envName: string,
): string[] {
  const fromFlags = flags[flag];
  if (fromFlags !== undefined) return fromFlags.flatMap((raw) => splitList(`--${flag}`, raw));
  const fromEnv = envValue(env, envName);
  return fromEnv === undefined ? [] : splitList(envName, fromEnv);
}

function buildConfig(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  context: ParseContext,
  commandPath: string | undefined,
): AppConfig {
  const store = buildStoreConfig(flags, env, context);
  const userPath = (setting: { source: string; raw: string }) =>
    resolveUserPath(setting.source, setting.raw, context.cwd, context.home);

  const rootSetting = pick(flags, env, 'workspace-root', 'SLIVINGDOC_WORKSPACE_ROOT');
  const workspaceRoot = rootSetting ? userPath(rootSetting) : commandPath;
  const privateSetting = pick(flags, env, 'private-root', 'SLIVINGDOC_PRIVATE_ROOT');
  const privateRoot = privateSetting
    ? userPath(privateSetting)
    : workspaceRoot === undefined
      ? undefined // the session's private/
      : defaultPrivateRoot(env, context.home);

  if (workspaceRoot !== undefined) {
    if (privateRoot !== undefined && overlaps(privateRoot, workspaceRoot)) {
      throw configuration('the private root and the workspace root overlap');
    }
    if (store.kind === 'embedded' && overlaps(store.dir, workspaceRoot)) {
      throw configuration('the store directory and the workspace root overlap');
    }
  }
  const integer = (
    flag: 'commit-retries' | 'checkpoint-packs' | 'retained-checkpoints',
    envName: string,
    fallback: number,
    min: number,
    max: number,
  ) => {
    const setting = pick(flags, env, flag, envName);
    return setting ? parseInteger(setting.source, setting.raw, min, max) : fallback;
  };
  const sets = pathSets(
    pickList(flags, env, 'writable', 'SLIVINGDOC_WRITABLE'),
    pickList(flags, env, 'read-only', 'SLIVINGDOC_READ_ONLY'),
  );
  return {
    store,
    workspaceRoot,
    privateRoot,
    writable: sets.writable,
    readOnly: sets.readOnly,
    commitRetries: integer('commit-retries', 'SLIVINGDOC_COMMIT_RETRIES', 8, 0, 100),
    checkpointPacks: integer(
      'checkpoint-packs',
      'SLIVINGDOC_CHECKPOINT_PACKS',
      1024,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    retainedCheckpoints: integer(
      'retained-checkpoints',
      'SLIVINGDOC_RETAINED_CHECKPOINTS',
      1,
      0,
      64,
    ),
  };
}

/** SPEC §5: the policy package validates and normalises the sets; an entry in both is refused. */
function pathSets(writable: string[], readOnly: string[]) {
  try {
    return createPathPolicy({ writable, readOnly }).sets;
  } catch (error) {
    if (error instanceof PathSetError) throw configuration(`path sets: ${error.message}`);
    throw error;
  }
}

function buildStoreConfig(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  context: ParseContext,
): StoreConfig {
  const prefixSetting = pick(flags, env, 'prefix', 'SLIVINGDOC_PREFIX');
  const prefix = prefixSetting
    ? validatePrefix(prefixSetting.source, prefixSetting.raw)
    : 'slivingdoc';
  const bucketSetting = pick(flags, env, 'bucket', 'SLIVINGDOC_BUCKET');

  if (bucketSetting === undefined) {
    // S3-only environment variables are ignored without a bucket; S3-only flags are not.
    for (const flag of S3_ONLY_FLAGS) {
      if (flags[flag] !== undefined) throw configuration(`--${flag} needs a bucket (--bucket)`);
    }
    const dirSetting = pick(flags, env, 'store-dir', 'SLIVINGDOC_STORE_DIR');
    const dir = dirSetting
      ? resolveUserPath(dirSetting.source, dirSetting.raw, context.cwd, context.home)
      : defaultStoreDir(env, context.home);
    return { kind: 'embedded', dir, prefix };
  }

  // Decision (docs/configuration.md): --store-dir with a bucket is contradictory, so it is
  // refused like an S3-only flag without a bucket; SLIVINGDOC_STORE_DIR is then ignored.
  if (flags['store-dir'] !== undefined) {
    throw configuration('--store-dir applies only to the embedded store, not with --bucket');
  }
  const bucket = validateBucket(bucketSetting.source, bucketSetting.raw);
  const regionSetting = pick(flags, env, 'region', 'AWS_REGION');
  const region = regionSetting
    ? validateRegion(regionSetting.source, regionSetting.raw)
    : undefined;
  const endpointSetting =
    pick(flags, env, 'endpoint', 'AWS_ENDPOINT_URL_S3') ??
    pick(flags, env, 'endpoint', 'AWS_ENDPOINT_URL');
  const endpoint = endpointSetting
    ? normaliseEndpoint(endpointSetting.source, endpointSetting.raw)
    : undefined;
  const pathStyleSetting = pick(flags, env, 'path-style', 'SLIVINGDOC_PATH_STYLE');
  const pathStyle = pathStyleSetting
    ? parseBoolean(pathStyleSetting.source, pathStyleSetting.raw)
    : endpoint !== undefined;
  return { kind: 's3', bucket, prefix, region, endpoint, pathStyle };
}
