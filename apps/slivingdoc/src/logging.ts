import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import { sendProcessWarnings } from './runtime/process-warnings';

/** The modules a record can name (contract §12). */
export const LOG_MODULES = ['app', 'cli', 'mcp', 'engine', 'store'] as const;
export type LogModule = (typeof LOG_MODULES)[number];

const LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
type LevelOrSilent = Level | 'silent';

/** Levels per module, from `LOG_LEVEL`. */
export interface LogLevels {
  defaultLevel: LevelOrSilent;
  modules: Partial<Record<LogModule, LevelOrSilent>>;
}

/**
 * Parses `LOG_LEVEL`: comma-separated `module=level` pairs and at most one bare default
 * (`cli=warn,mcp=debug,info`). Unset or empty means `info`. Anything malformed — an
 * unknown module or level, a repeated module, two defaults, an empty item — yields
 * `malformed: true` and plain `info` everywhere, so a typo never silences the logs.
 */
export function parseLogLevel(
  raw: string | undefined,
  unset: LevelOrSilent = 'info',
): { levels: LogLevels; malformed: boolean } {
  const fallback: LogLevels = { defaultLevel: 'info', modules: {} };
  if (raw === undefined || raw.trim() === '') {
    return { levels: { defaultLevel: unset, modules: {} }, malformed: false };
  }
  const levels: LogLevels = { defaultLevel: 'info', modules: {} };
  let sawDefault = false;
  for (const item of raw.split(',').map((part) => part.trim().toLowerCase())) {
    const [name, level, extra] = item.split('=').map((part) => part.trim());
    const isLevel = (value: string | undefined): value is LevelOrSilent =>
      value !== undefined && LEVELS.includes(value);
    if (extra !== undefined) return { levels: fallback, malformed: true };
    if (level === undefined) {
      if (sawDefault || !isLevel(name)) return { levels: fallback, malformed: true };
      levels.defaultLevel = name;
      sawDefault = true;
      continue;
    }
    const module = LOG_MODULES.find((m) => m === name);
    if (module === undefined || !isLevel(level) || levels.modules[module] !== undefined) {
      return { levels: fallback, malformed: true };
    }
    levels.modules[module] = level;
  }
  return { levels, malformed: false };
}

/** The process's loggers: one child per module, each at its own level. */
export interface Logging {
  module(name: LogModule): Logger;
}

/** What {@link createLogging} needs. */
export interface LoggingOptions {
  /** The raw `LOG_LEVEL` value. */
  logLevel: string | undefined;
  /** Removes credentials (secret values, key ids, URL user info) from log text. */
  scrubCredentials: (text: string) => string;
  /** Where records go; defaults to fd 2, synchronously (nothing lost on a quick exit). */
  destination?: DestinationStream;
  /** The level when `LOG_LEVEL` is unset or empty; default `info`. */
  unsetLevel?: LevelOrSilent;
}

/**
 * Creates pino loggers writing JSON lines to stderr only: `level` as its label, `module`
 * naming the part of the process, and `err` serialised with its full cause chain for
 * operators, with credentials scrubbed from every string in it.
 */
export function createLogging(options: LoggingOptions): Logging {
  const { levels, malformed } = parseLogLevel(options.logLevel, options.unsetLevel);
  const root = pino(
    {
      level: levels.defaultLevel,
      formatters: { level: (label) => ({ level: label }) },
      serializers: {
        err: (err: unknown) =>
          scrubStrings(
            err instanceof Error ? pino.stdSerializers.err(err) : err,
            options.scrubCredentials,
          ),
      },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
  const children = new Map<LogModule, Logger>();
  const logging: Logging = {
    module(name) {
      let child = children.get(name);
      if (child === undefined) {
        child = root.child(
          { module: name },
          { level: levels.modules[name] ?? levels.defaultLevel },
        );
        children.set(name, child);
      }
      return child;
    },
  };
  if (malformed) {
    logging
      .module('app')
      .warn(
        { logLevel: options.scrubCredentials(options.logLevel ?? '').slice(0, 200) },
        'malformed LOG_LEVEL; logging at info',
      );
  }
  return logging;
}

/** Applies `scrub` to every string inside a serialised error (message, stack, cause, props). */
function scrubStrings(value: unknown, scrub: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => scrubStrings(item, scrub, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, scrubStrings(item, scrub, depth + 1)]),
  );
}

/**
 * Routes process warnings (`process.emitWarning`, e.g. from a dependency), those held since the
 * bin started included, into `log` as one `warn` record each, so stderr stays pino JSON lines
 * (see runtime/process-warnings.ts).
 */
export function routeProcessWarnings(log: Logger): void {
  sendProcessWarnings((warning) => {
    log.warn({ warning: { name: warning.name, message: warning.message } }, 'process warning');
  });
}
