import { isAbsolute, relative, resolve, sep } from 'node:path';
// The subpath, not the barrel: the barrel would load the whole engine before `serve` answers.
import { DEFAULT_ACTOR, isValidActor } from '@slivingdoc/engine/actor';
import { createPathPolicy, PathSetError } from '@slivingdoc/policy';
import type { CommandLine, Flags } from './command-line';
import { defaultPrivateRoot, overlaps } from './paths';
import { configuration, usage } from './refusal';
import { envValue, pick } from './setting-source';
import { driverOf } from './store-registry';
import { buildStoreConfig } from './store-settings';
import type { AppConfig, Invocation, ListenConfig, ParseContext, TokenCommandLine } from './types';
import {
  parseInteger,
  parseMergeAdditions,
  quote,
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
  if (commandLine.kind === 'token') {
    return {
      kind: 'token',
      command: checkedTokenCommand(commandLine),
      tokenFile: tokenFile(env, context),
    };
  }
  const { flags } = commandLine;
  if (commandLine.kind === 'serve') {
    const config = buildConfig(flags, env, context, undefined);
    const listen = buildListen(flags, env, context);
    return { kind: 'serve', config: listen === undefined ? config : { ...config, listen } };
  }
  if (commandLine.kind === 'view') {
    const setting = pick(flags, env, 'listen', 'SLIVINGDOC_LISTEN');
    if (setting === undefined) throw usage('view needs --listen HOST:PORT (e.g. 127.0.0.1:8080)');
    return {
      kind: 'view',
      config: buildConfig(flags, env, context, undefined),
      listen: parseListenAddress(setting.source, setting.raw),
      tokenFile: tokenFile(env, context),
    };
  }
  if (commandLine.kind === 'review') {
    const ruleActor = flags.actor;
    if (ruleActor !== undefined && !isValidActor(ruleActor)) {
      throw configuration(
        '--actor: not a valid actor (1–64 bytes of UTF-8, no control characters, < or >)',
      );
    }
    return {
      kind: 'review',
      config: buildConfig(flags, env, context, undefined),
      action: commandLine.action,
      mode: commandLine.action === 'set' ? commandLine.mode : undefined,
      ruleActor,
      paths: (flags.paths ?? []).flatMap((raw) => splitList('--paths', raw)),
      json: flags.json ?? false,
    };
  }
  if (commandLine.kind === 'proposals') {
    const reason = flags.reason;
    if (reason !== undefined && !isReason(reason)) {
      throw configuration('--reason: at most 4,096 bytes of UTF-8 without control characters');
    }
    return {
      kind: 'proposals',
      // The current directory stands in for a path so the CLI's actor (the decider) resolves.
      config: buildConfig(flags, env, context, context.cwd),
      action: commandLine.action,
      id: commandLine.action === 'list' ? undefined : commandLine.id,
      reason,
      json: flags.json ?? false,
    };
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
    case 'blame':
      return {
        kind: 'blame',
        path,
        config,
        file: notebookFile(commandLine.file, path, context.cwd),
        json: flags.json ?? false,
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
    case 'approve':
      return {
        kind: 'approve',
        path,
        config,
        id: commandLine.id,
        revision:
          flags.revision === undefined
            ? undefined
            : parseInteger('--revision', flags.revision, 1, Number.MAX_SAFE_INTEGER),
        json: flags.json ?? false,
        quiet,
      };
  }
}

/** A rejection's reason: text a person wrote, shown to the agent (no control characters). */
function isReason(reason: string): boolean {
  return Buffer.byteLength(reason, 'utf8') <= 4096 && !/\p{Cc}/u.test(reason);
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
    commitRetries: integerSetting(
      flags,
      env,
      'commit-retries',
      'SLIVINGDOC_COMMIT_RETRIES',
      8,
      0,
      100,
    ),
    checkpointPacks: integerSetting(
      flags,
      env,
      'checkpoint-packs',
      'SLIVINGDOC_CHECKPOINT_PACKS',
      256,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    retainedCheckpoints: integerSetting(
      flags,
      env,
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

/** The whole-number settings, each from its flag or else its environment variable. */
type IntegerFlag =
  | 'commit-retries'
  | 'checkpoint-packs'
  | 'retained-checkpoints'
  | 'max-sessions'
  | 'session-idle-timeout'
  | 'token-calls';

/** A whole-number setting in [min, max] from its flag or variable; `fallback` when neither. */
function integerSetting(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  ...[flag, envName, fallback, min, max]: [IntegerFlag, string, number, number, number]
): number {
  const setting = pick(flags, env, flag, envName);
  return setting ? parseInteger(setting.source, setting.raw, min, max) : fallback;
}

/**
 * `SLIVINGDOC_TOKEN_FILE`, resolved; undefined: the user's config directory, which the
 * commands that use tokens resolve (`runtime/token-file.ts`), so parsing a stdio `serve`
 * loads nothing of the HTTP edge before its first answer.
 */
function tokenFile(env: NodeJS.ProcessEnv, context: ParseContext): string | undefined {
  const given = envValue(env, 'SLIVINGDOC_TOKEN_FILE');
  return given === undefined
    ? undefined
    : resolveUserPath('SLIVINGDOC_TOKEN_FILE', given, context.cwd, context.home);
}

/**
 * A token's name becomes its sessions' actor and their directory name under the workspace
 * root, so it must be both: a portable file name (letters, digits, `.`, `_`, `-`, not
 * starting with `.` or `-`), 1–64 bytes. Never starting with `.` keeps the view's own
 * directory (`.view`) out of every token's reach.
 */
const TOKEN_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

function checkedTokenCommand(command: TokenCommandLine): TokenCommandLine {
  if (command.action === 'list') return command;
  if (!TOKEN_NAME.test(command.name))
    throw configuration(
      `token name ${quote(command.name)}: use 1–64 letters, digits, '.', '_' or '-', not starting with '.' or '-'`,
    );
  if (command.action === 'remove') return command;
  const split = (flag: string, values: string[] | undefined) =>
    values?.flatMap((raw) => splitList(flag, raw));
  const sets = pathSets(
    split('--writable', command.writable) ?? [],
    split('--read-only-paths', command.readOnlyPaths) ?? [],
  );
  return {
    ...command,
    writable: command.writable === undefined ? undefined : sets.writable,
    readOnlyPaths: command.readOnlyPaths === undefined ? undefined : sets.readOnly,
  };
}

/** `serve --listen HOST:PORT` (or SLIVINGDOC_LISTEN) and the HTTP settings beside it. */
function buildListen(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  context: ParseContext,
): ListenConfig | undefined {
  const listen = pick(flags, env, 'listen', 'SLIVINGDOC_LISTEN');
  const httpOnly = (
    [
      'listen-public',
      'allow-origin',
      'max-sessions',
      'session-idle-timeout',
      'token-calls',
    ] as const
  ).find((flag) => flags[flag] !== undefined);
  if (listen === undefined) {
    if (httpOnly !== undefined) throw configuration(`--${httpOnly} needs --listen HOST:PORT`);
    return undefined;
  }
  const { host, port } = parseListenAddress(listen.source, listen.raw);
  const origins =
    flags['allow-origin'] ?? splitOrigins(envValue(env, 'SLIVINGDOC_ALLOWED_ORIGINS'));
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin))
      throw configuration(
        `--allow-origin: ${quote(origin)} is not an origin (scheme://host[:port], no path)`,
      );
  }
  return {
    host,
    port,
    public: flags['listen-public'] ?? false,
    allowedOrigins: origins,
    maxSessions: integerSetting(
      flags,
      env,
      'max-sessions',
      'SLIVINGDOC_MAX_SESSIONS',
      256,
      1,
      100_000,
    ),
    idleTimeoutMs:
      integerSetting(
        flags,
        env,
        'session-idle-timeout',
        'SLIVINGDOC_SESSION_IDLE_TIMEOUT',
        300,
        1,
        7 * 24 * 3600,
      ) * 1000,
    maxCallsPerToken: integerSetting(
      flags,
      env,
      'token-calls',
      'SLIVINGDOC_TOKEN_CALLS',
      16,
      1,
      1000,
    ),
    tokenFile: tokenFile(env, context),
  };
}

const splitOrigins = (raw: string | undefined) =>
  raw === undefined ? [] : raw.split(/[\s,]+/).filter((o) => o !== '');

/** `HOST:PORT`, `[IPv6]:PORT`; the port 0–65535 (0: any free port, printed in the log). */
function parseListenAddress(source: string, raw: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(raw);
  const port = Number(match?.[3]);
  if (match === null || port > 65535)
    throw configuration(
      `${source}: ${quote(raw)} is not HOST:PORT (e.g. 127.0.0.1:7077 or [::1]:7077)`,
    );
  return { host: (match[1] ?? match[2])!, port };
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

/**
 * blame's file: a path inside the notebook directory (absolute, or relative to the current
 * directory) becomes its notebook path; anything else is taken as a notebook path already.
 */
function notebookFile(file: string, notebook: string, cwd: string): string {
  const local = resolve(cwd, file);
  const inside = relative(notebook, local);
  if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside))
    return inside.split(sep).join('/');
  return file.replace(/^\.\//, '');
}
