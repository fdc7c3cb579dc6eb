// The subpath, not the barrel: the barrel would load the whole engine before `serve` answers.
import { DEFAULT_ACTOR, isValidActor } from '@slivingdoc/engine/actor';
import { createPathPolicy, PathSetError } from '@slivingdoc/policy';
import type { CommandLine, Flags } from './command-line';
import { defaultPrivateRoot, overlaps } from './paths';
import { configuration } from './refusal';
import { envValue, pick } from './setting-source';
import { driverOf } from './store-registry';
import { buildStoreConfig } from './store-settings';
import type { AppConfig, Invocation, ParseContext } from './types';
import {
  parseInteger,
  parseMergeAdditions,
  resolveUserPath,
  splitList,
  validatePrefix,
} from './values';

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
 * contract §12: `--actor`, else `SLIVINGDOC_ACTOR`, else (CLI) the OS user name. A configured value
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
  const prefixSetting = pick(flags, env, 'prefix', 'SLIVINGDOC_PREFIX');
  const prefix = prefixSetting
    ? validatePrefix(prefixSetting.source, prefixSetting.raw)
    : 'slivingdoc';
  const store = buildStoreConfig(flags, env, context, prefix);
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
    const storeDir = driverOf(store).localDirectory(store);
    if (storeDir !== undefined && overlaps(storeDir, workspaceRoot)) {
      throw configuration(
        `the store directory ${storeDir} and the workspace root ${workspaceRoot} overlap`,
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
      256,
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

/** contract §5: the policy package validates and normalises the sets; an entry in both is refused. */
function pathSets(writable: string[], readOnly: string[]) {
  try {
    return createPathPolicy({ writable, readOnly }).sets;
  } catch (error) {
    if (error instanceof PathSetError) throw configuration(`path sets: ${error.message}`);
    throw error;
  }
}
