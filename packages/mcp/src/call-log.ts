import type { Scrubber } from '@slivingdoc/envelope';

/**
 * Where the two per-call records go (contract §12). Matches pino's `logger[level](obj, msg)`, so
 * the app passes its `mcp` child logger as is.
 */
export interface CallLogger {
  info(record: Record<string, unknown>, msg: string): void;
  warn(record: Record<string, unknown>, msg: string): void;
  error(record: Record<string, unknown>, msg: string): void;
}

/** A logger that drops every record, for embedders that log nothing. */
export const silentLogger: CallLogger = { info() {}, warn() {}, error() {} };

/** The error of a completion record: the full cause chain, credentials scrubbed. */
export interface LoggedError {
  type: string;
  message: string;
  stack?: string;
  code?: string;
  cause?: LoggedError;
}

/** Cause chains can be cyclic or absurdly deep; operators need the first few links. */
const MAX_CAUSE_DEPTH = 8;

/**
 * Serialises a failure for the log record with its full cause (for operators) but without
 * credentials: every string passes through `scrubber.credentials`.
 */
export function loggedError(value: unknown, scrubber: Scrubber, depth = 0): LoggedError {
  if (!(value instanceof Error))
    return { type: typeof value, message: scrubber.credentials(String(value)) };
  const record: LoggedError = {
    type: value.name,
    message: scrubber.credentials(value.message),
  };
  if (value.stack) record.stack = scrubber.credentials(value.stack);
  const code = (value as { code?: unknown }).code;
  if (typeof code === 'string') record.code = code;
  if (value.cause !== undefined && depth < MAX_CAUSE_DEPTH)
    record.cause = loggedError(value.cause, scrubber, depth + 1);
  return record;
}
