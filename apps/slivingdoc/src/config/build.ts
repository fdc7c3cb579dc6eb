import { DEFAULT_ACTOR, isValidActor } from '@slivingdoc/engine';
import { createPathPolicy, PathSetError } from '@slivingdoc/policy';
import type { CommandLine, FlagName, Flags } from './command-line';
import { defaultPrivateRoot, defaultStoreDir, overlaps } from './paths';
import { configuration } from './refusal';
import type { AppConfig, Invocation, ParseContext, StoreConfig } from './types';
import {
  normaliseEndpoint,
  parseBoolean,
  parseInteger,
  parseMergeAdditions,
  resolveUserPath,
  splitList,
  validateBucket,
  validatePrefix,
  validateRegion,
} from './values';

/** Options that only make sense with a bucket: refused without one (SPEC §12). */
const S3_ONLY_FLAGS = ['region', 'endpoint', 'path-style'] as const;

/**
 * Interprets a command line with the environment: every value validated, defaults applied.
 * Throws a configuration refusal.
 */
export function buildInvocation(
  commandLine: Exclude<CommandLine, { kind: 'help' | 'version' }>,
  env: NodeJS.ProcessEnv,
  context: ParseContext,
): Invocation {
  const { flags } = commandLine;
  if (commandLine.kind === 'serve') {
    return { kind: 'serve', config: buildConfig(flags, env, context, undefined) };
  }
  const path = resolveUserPath('path', commandLine.path, context.cwd, context.home);
  const config = buildConfig(flags, env, context, path);
  const quiet = flags.quiet ?? false;
  switch (commandLine.kind) {
    case 'pull':
      return { kind: 'pull', path, config, quiet };
    case 'commit':
      return { kind: 'commit', path, message: commandLine.message, config, quiet };
    case 'status':
      return { kind: 'status', path, config, json: flags.json ?? false };
    case 'log':
      return {
        kind: 'log',
        path,
        config,
        json: flags.json ?? false,
        limit:
          flags['max-count'] === undefined
            ? 20
            : parseInteger('-n', flags['max-count'], 1, Number.MAX_SAFE_INTEGER),
        stat: flags.stat ?? false,
        full: flags.full ?? false,
      };
    case 'revert':
      return {
        kind: 'revert',
        path,
        config,
        generation: parseInteger(
          '--generation',
          flags.generation ?? '',
          1,
          Number.MAX_SAFE_INTEGER,
        ),
        message: flags.message,
        quiet,
      };
  }
}

/**
 * SPEC §12: `--actor`, else `SLIVINGDOC_ACTOR`, else (CLI) the OS user name. A configured value
 * must be a valid author name; an OS user name that is not one falls back to `slivingdoc`.
 * `serve` without one leaves it to each MCP client's name.
 */
function resolveActor(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  context: ParseContext,
  serve: boolean,
): string | undefined {
  const setting = pick(flags, env, 'actor', 'SLIVINGDOC_ACTOR');
  if (setting !== undefined) {
    if (!isValidActor(setting.raw)) {
      throw configuration(
        `${setting.source}: not a valid actor (1–64 bytes of UTF-8, no control characters, < or >)`,
      );
    }
    return setting.raw;
  }
  if (serve) return undefined;
  const user = context.userName;
  return user !== undefined && isValidActor(user) ? user : DEFAULT_ACTOR;
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
  flag: FlagName,
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
      throw configuration(
        `the private root ${privateRoot} and the workspace root ${workspaceRoot} overlap`,
      );
    }
    if (store.kind === 'embedded' && overlaps(store.dir, workspaceRoot)) {
      throw configuration(
        `the store directory ${store.dir} and the workspace root ${workspaceRoot} overlap`,
      );
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
  const additions = pick(flags, env, 'merge-additions', 'SLIVINGDOC_MERGE_ADDITIONS');
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
    mergeAdditions: additions ? parseMergeAdditions(additions.source, additions.raw) : 'keep',
    actor: resolveActor(flags, env, context, commandPath === undefined),
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
