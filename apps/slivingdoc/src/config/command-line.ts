import { type ParseArgsConfig, parseArgs } from 'node:util';
import { configuration, usage } from './refusal';
import { storeDrivers } from './store-registry';
import type { TokenCommandLine } from './types';
import { quote } from './values';

const COMMANDS = {
  serve: 'serve',
  s: 'serve',
  pull: 'pull',
  p: 'pull',
  commit: 'commit',
  c: 'commit',
  status: 'status',
  log: 'log',
  blame: 'blame',
  revert: 'revert',
  view: 'view',
  version: 'version',
  v: 'version',
  '--version': 'version',
  '-V': 'version',
} as const;

/** A command's canonical name. */
export type CommandName =
  | (typeof COMMANDS)[keyof typeof COMMANDS]
  | 'token'
  | 'review'
  | 'proposals';

/** Options that only some commands take (all others apply to every path command and serve). */
const ONLY: Partial<Record<FlagName, readonly CommandName[]>> = {
  message: ['commit', 'revert'],
  quiet: ['pull', 'commit', 'revert', 'proposals'],
  json: ['status', 'log', 'blame', 'review', 'proposals'],
  paths: ['review'],
  reason: ['proposals'],
  revision: ['proposals'],
  'max-count': ['log'],
  stat: ['log'],
  full: ['log'],
  generation: ['revert'],
  listen: ['serve', 'view'],
  'listen-public': ['serve'],
  'allow-origin': ['serve'],
  'max-sessions': ['serve'],
  'session-idle-timeout': ['serve'],
  'token-calls': ['serve'],
};

/**
 * Every option of contract §12 but the store drivers' own (each declared by its driver, registered in
 * `store-drivers.ts`), plus `-m` (commit) and `-h`.
 */
export const OPTIONS = {
  prefix: { type: 'string' },
  'workspace-root': { type: 'string' },
  'private-root': { type: 'string' },
  writable: { type: 'string', multiple: true },
  'read-only': { type: 'string', multiple: true },
  'commit-retries': { type: 'string' },
  'checkpoint-packs': { type: 'string' },
  'retained-checkpoints': { type: 'string' },
  'merge-additions': { type: 'string' },
  actor: { type: 'string' },
  message: { type: 'string', short: 'm' },
  quiet: { type: 'boolean', short: 'q' },
  json: { type: 'boolean' },
  'max-count': { type: 'string', short: 'n' },
  stat: { type: 'boolean' },
  full: { type: 'boolean' },
  generation: { type: 'string' },
  listen: { type: 'string' },
  'listen-public': { type: 'boolean' },
  'allow-origin': { type: 'string', multiple: true },
  'max-sessions': { type: 'string' },
  'session-idle-timeout': { type: 'string' },
  'token-calls': { type: 'string' },
  paths: { type: 'string', multiple: true },
  reason: { type: 'string' },
  revision: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** The store drivers' flags: each takes a value. */
const STORE_OPTIONS = Object.fromEntries(
  storeDrivers.flatMap((driver) =>
    Object.values(driver.settings).map((setting) => [setting.flag, { type: 'string' }] as const),
  ),
) satisfies ParseArgsConfig['options'];

type ParsedFlags = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true; tokens: true }>
>;

/**
 * The flags as given (last occurrence of a scalar, every occurrence of a list). The drivers'
 * flags are there too, read by name (`flagValue`).
 */
export type Flags = ParsedFlags['values'];
/** The name of a flag, without `--`. */
export type FlagName = keyof typeof OPTIONS;

/** The command line's shape, before any value is interpreted. */
export type CommandLine =
  | { kind: 'help'; command?: CommandName }
  | { kind: 'version' }
  | { kind: 'serve'; flags: Flags }
  | { kind: 'view'; flags: Flags }
  | { kind: 'pull' | 'status' | 'log' | 'revert'; flags: Flags; path: string }
  | { kind: 'commit'; flags: Flags; path: string; message: string }
  | { kind: 'blame'; flags: Flags; path: string; file: string }
  | ReviewCommandLine
  | ProposalsCommandLine
  | TokenCommandLine;

/** `slivingdoc review set queue|direct | show` (docs/review.md). */
export type ReviewCommandLine =
  | { kind: 'review'; action: 'set'; mode: 'queue' | 'direct'; flags: Flags }
  | { kind: 'review'; action: 'show'; flags: Flags };

/** `slivingdoc proposals list | show ID | reject ID | approve ID [PATH]` (docs/review.md). */
export type ProposalsCommandLine =
  | { kind: 'proposals'; action: 'list'; flags: Flags }
  | { kind: 'proposals'; action: 'show' | 'reject'; id: string; flags: Flags }
  | { kind: 'approve'; id: string; path: string; flags: Flags };

const TOKEN_OPTIONS = {
  'read-only': { type: 'boolean' },
  writable: { type: 'string', multiple: true },
  'read-only-paths': { type: 'string', multiple: true },
  review: { type: 'string' },
  reviewer: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/**
 * Reads the command, its flags and its path; throws a usage (or empty-value configuration)
 * refusal. Loads nothing beyond `node:util` and the drivers' declarations, so `version` and
 * `-h` answer at once.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const [first, ...rest] = argv;
  if (first === '-h' || first === '--help') return { kind: 'help' };
  const known =
    'serve, view, pull, commit, status, log, blame, revert, review, proposals, token or version';
  if (first === undefined) throw usage(`no command given (${known})`);
  if (first === 'token') return parseTokenCommand(rest);
  if (first === 'review' || first === 'proposals') return parseReviewCommand(first, rest);
  const command = Object.hasOwn(COMMANDS, first)
    ? COMMANDS[first as keyof typeof COMMANDS]
    : undefined;
  if (command === undefined) throw usage(`unknown command ${quote(first)} (${known})`);
  const { values: flags, positionals, tokens } = parseFlags(rest);
  if (flags.help) return { kind: 'help', command };
  if (command === 'version') {
    if (rest.length > 0) throw usage('version takes no arguments');
    return { kind: 'version' };
  }
  for (const token of tokens) {
    if (token.kind === 'option' && token.value === '' && token.name !== 'prefix') {
      throw configuration(`${token.rawName}: empty value`);
    }
  }
  checkOnly(flags, command);
  if (command === 'serve' || command === 'view') {
    if (positionals.length > 0) throw usage(`${command} takes no path`);
    return command === 'serve' ? { kind: 'serve', flags } : { kind: 'view', flags };
  }
  if (command === 'blame') {
    if (positionals.length !== 2)
      throw usage(`blame takes a path and a file (got ${positionals.length} arguments)`);
    const [path, file] = positionals as [string, string];
    if (path === '' || file === '') throw usage('blame: the path or the file is empty');
    return { kind: 'blame', flags, path, file };
  }
  if (positionals.length !== 1) {
    throw usage(`${command} takes exactly one path (got ${positionals.length})`);
  }
  const path = positionals[0]!;
  if (path === '') throw usage(`${command}: the path is empty`);
  if (command === 'commit') {
    if (flags.message === undefined) throw usage('commit needs -m <message>');
    return { kind: 'commit', flags, path, message: flags.message };
  }
  if (command === 'revert' && flags.generation === undefined) {
    throw usage('revert needs --generation <N> (see slivingdoc log)');
  }
  return { kind: command, flags, path };
}

/** Refuses a flag the command does not take. */
function checkOnly(flags: Flags, command: CommandName): void {
  for (const [flag, commands] of Object.entries(ONLY)) {
    if (flags[flag as FlagName] !== undefined && !commands.includes(command)) {
      throw usage(`--${flag} applies only to ${commands.join(' and ')}`);
    }
  }
}

function parseReviewCommand(
  command: 'review' | 'proposals',
  args: string[],
): ReviewCommandLine | ProposalsCommandLine | { kind: 'help'; command: CommandName } {
  const { values: flags, positionals, tokens } = parseFlags(args);
  if (flags.help) return { kind: 'help', command };
  for (const token of tokens) {
    if (token.kind === 'option' && token.value === '' && token.name !== 'prefix') {
      throw configuration(`${token.rawName}: empty value`);
    }
  }
  checkOnly(flags, command);
  const [action, ...rest] = positionals;
  if (command === 'review') {
    if (action === 'show' && rest.length === 0) {
      if (flags.paths !== undefined) throw usage('review show takes no --paths');
      return { kind: 'review', action, flags };
    }
    if (action === 'set' && rest.length === 1 && (rest[0] === 'queue' || rest[0] === 'direct')) {
      if (flags.json !== undefined) throw usage('--json applies only to review show');
      return { kind: 'review', action, mode: rest[0], flags };
    }
    throw usage('review needs set queue|direct [--actor NAME] [--paths P…] or show [--json]');
  }
  if (flags.reason !== undefined && action !== 'reject')
    throw usage('--reason applies only to reject');
  if (flags.revision !== undefined && action !== 'approve')
    throw usage('--revision applies only to approve');
  if (action === 'list' && rest.length === 0) return { kind: 'proposals', action, flags };
  if ((action === 'show' || action === 'reject') && rest.length === 1 && rest[0] !== '')
    return { kind: 'proposals', action, id: rest[0]!, flags };
  if (action === 'approve' && (rest.length === 1 || rest.length === 2) && rest[0] !== '') {
    const path = rest[1] ?? '.';
    if (path === '') throw usage('proposals approve: the path is empty');
    return { kind: 'approve', id: rest[0]!, path, flags };
  }
  throw usage('proposals needs list, show ID, approve ID [PATH] or reject ID');
}

function parseTokenCommand(args: string[]): TokenCommandLine | { kind: 'help'; command: 'token' } {
  let parsed: { values: { [K in keyof typeof TOKEN_OPTIONS]?: unknown }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: TOKEN_OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usage(describeParseError(error));
  }
  const { values, positionals } = parsed as {
    values: {
      'read-only'?: boolean;
      writable?: string[];
      'read-only-paths'?: string[];
      review?: string;
      reviewer?: boolean;
      help?: boolean;
    };
    positionals: string[];
  };
  if (values.help) return { kind: 'help', command: 'token' };
  const [action, ...names] = positionals;
  const onlyAdd =
    values['read-only'] !== undefined ||
    values.writable !== undefined ||
    values['read-only-paths'] !== undefined ||
    values.review !== undefined ||
    values.reviewer !== undefined;
  if (action === 'list') {
    if (names.length > 0 || onlyAdd) throw usage('token list takes no arguments');
    return { kind: 'token', action };
  }
  if (action !== 'add' && action !== 'remove')
    throw usage('token needs add NAME, list or remove NAME');
  if (names.length !== 1) throw usage(`token ${action} takes exactly one NAME`);
  const name = names[0]!;
  if (action === 'remove') {
    if (onlyAdd) throw usage('token remove takes only a NAME');
    return { kind: 'token', action, name };
  }
  return {
    kind: 'token',
    action,
    name,
    readOnly: values['read-only'] ?? false,
    writable: values.writable,
    readOnlyPaths: values['read-only-paths'],
    review: reviewOption(values.review),
    reviewer: values.reviewer ?? false,
  };
}

/** `token add --review queue`: a token may be made stricter than the notebook, never looser. */
function reviewOption(value: string | undefined): 'queue' | undefined {
  if (value === undefined || value === 'queue') return value;
  throw usage('token add --review takes only queue (a token can be stricter, never looser)');
}

function parseFlags(args: string[]): ParsedFlags {
  try {
    return parseArgs({
      args,
      options: { ...STORE_OPTIONS, ...OPTIONS },
      allowPositionals: true,
      strict: true,
      tokens: true,
    }) as ParsedFlags;
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
