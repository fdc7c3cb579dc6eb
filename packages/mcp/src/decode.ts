import { DomainError } from '@slivingdoc/envelope';
import { checkMessage, PolicyError, parseRequestPath } from '@slivingdoc/policy';
import type { ToolName } from './tools';

/** The decoded arguments of a tool call: `path` stays the caller's string (maybe empty). */
export interface DecodedArguments {
  path?: string;
  message?: string;
}

/** The fields each tool accepts and which of them are required; all are strings. */
const FIELDS: Record<ToolName, { allowed: readonly string[]; required: readonly string[] }> = {
  notes_pull: { allowed: ['path'], required: [] },
  notes_commit: { allowed: ['message', 'path'], required: ['message'] },
};

/** Quotes a caller-supplied field name for a message, bounded so prose stays short. */
function quote(name: string): string {
  const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return JSON.stringify(shown);
}

function invalidArguments(message: string): DomainError<'INVALID_REQUEST'> {
  return new DomainError({ code: 'INVALID_REQUEST', reason: 'INVALID_ARGUMENTS', message });
}

/** Re-throws a policy refusal as the catalogued domain error it stands for. */
function asDomainError(err: unknown): unknown {
  return err instanceof PolicyError
    ? new DomainError({
        code: 'INVALID_REQUEST',
        reason: err.reason,
        message: err.message,
        cause: err,
      })
    : err;
}

/**
 * The strict decoder of contract §2 over the raw `arguments` (never a schema library's lenient
 * parse). Checks in order, first failure wins: duplicate key, unknown field, explicit null,
 * wrong type, missing required field (INVALID_ARGUMENTS); then the path (PATH_INVALID); then
 * the message (MESSAGE_INVALID). Absent `arguments` means `{}`.
 */
export function decodeArguments(
  tool: ToolName,
  raw: Record<string, unknown> | undefined,
  opts: { home: string; duplicateKeys: boolean },
): DecodedArguments {
  if (opts.duplicateKeys)
    throw invalidArguments(`The ${tool} arguments repeat a field name; send each field once.`);
  const args = raw ?? {};
  const { allowed, required } = FIELDS[tool];
  for (const [name, value] of Object.entries(args)) {
    if (!allowed.includes(name))
      throw invalidArguments(
        `Unknown field ${quote(name)} in the ${tool} arguments; allowed: ${allowed.join(', ')}.`,
      );
    if (value === null)
      throw invalidArguments(`Field "${name}" is null; omit it or pass a string.`);
    if (typeof value !== 'string')
      throw invalidArguments(`Field "${name}" must be a string, not ${describeType(value)}.`);
  }
  for (const name of required)
    if (!Object.hasOwn(args, name))
      throw invalidArguments(`Field "${name}" is required by ${tool}.`);
  const decoded: DecodedArguments = {};
  if (typeof args.path === 'string') decoded.path = args.path;
  if (typeof args.message === 'string') decoded.message = args.message;
  try {
    parseRequestPath(decoded.path, { home: opts.home });
    if (decoded.message !== undefined) checkMessage(decoded.message);
  } catch (err) {
    throw asDomainError(err);
  }
  return decoded;
}

function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
