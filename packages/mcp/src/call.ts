import { homedir } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { NotebookService } from '@slivingdoc/engine';
import {
  buildError,
  candidText,
  type DomainError,
  type ErrorResult,
  internalError,
  isDomainError,
  newDiagnosticId,
  resultText,
  type Scrubber,
  type SuccessResult,
} from '@slivingdoc/envelope';
import { type CallLogger, loggedError } from './call-log';
import { type DecodedArguments, decodeArguments } from './decode';
import { INVALID_PARAMS, ProtocolError, REQUEST_CANCELLED } from './jsonrpc';
import type { ToolName } from './tools';

/** What answering one tool call needs. */
export interface ToolCallContext {
  service: NotebookService;
  scrubber: Scrubber;
  logger: CallLogger;
  /** Home directory for `~/` expansion. */
  home?: string;
  /** Fresh id per call; injectable for golden tests. */
  newDiagnosticId?: () => string;
  /** The author name of this client's commits (contract §9); absent: the engine's default. */
  actor?: string;
}

/** One tool call as it arrived: the raw arguments and whether the line repeated a key. */
export interface ToolCall {
  /** The tool's name as the caller sent it; a name outside `TOOL_NAMES` is a protocol error. */
  tool: string;
  rawArguments: Record<string, unknown> | undefined;
  duplicateKeys: boolean;
  signal: AbortSignal;
}

/** Runs one tool's operation on the service with its decoded arguments. */
type ToolHandler = (
  service: NotebookService,
  args: DecodedArguments,
  signal: AbortSignal,
  actor: string | undefined,
) => Promise<SuccessResult>;

/**
 * The operation of every tool, keyed by {@link ToolName}: a tool added to `TOOL_NAMES` without
 * a handler fails the type-check, and a name outside it finds none (never another tool's).
 */
const HANDLERS: Readonly<Record<ToolName, ToolHandler>> = {
  notes_pull: (service, args, signal) => service.pull({ path: args.path, signal }),
  notes_commit: (service, args, signal, actor) =>
    service.commit({
      message: args.message ?? '',
      path: args.path,
      signal,
      viaTools: true,
      ...(actor !== undefined ? { actor } : {}),
    }),
};

function isToolName(name: string): name is ToolName {
  return Object.hasOwn(HANDLERS, name);
}

function successResult(result: SuccessResult, service: NotebookService): CallToolResult {
  return {
    content: [{ type: 'text', text: resultText(result, service.sets) }],
    structuredContent: result as unknown as Record<string, unknown>,
  };
}

function errorResult(error: ErrorResult, service: NotebookService): CallToolResult {
  return {
    content: [{ type: 'text', text: candidText(error, service.sets) }],
    structuredContent: error as unknown as Record<string, unknown>,
    isError: true,
  };
}

/** The envelope of a failure; a failure to build one is itself an internal error. */
function envelopeFor(
  failure: unknown,
  diagnosticId: string,
  ctx: ToolCallContext,
): { error: ErrorResult; cause: DomainError } {
  const domain = isDomainError(failure) ? failure : internalError(failure);
  const build = { diagnosticId, sets: ctx.service.sets, scrubber: ctx.scrubber };
  try {
    return { error: buildError(domain, build), cause: domain };
  } catch (buildFailure) {
    const internal = internalError(
      new Error('could not build the error envelope', { cause: [domain, buildFailure] }),
    );
    return { error: buildError(internal, build), cause: internal };
  }
}

/** Domain errors an operator should look at are logged louder than caller mistakes. */
function levelFor(code: string): 'warn' | 'error' {
  return code === 'ENGINE_FAILED' || code === 'STORAGE_INTEGRITY' || code === 'RECOVERY_FAILURE'
    ? 'error'
    : 'warn';
}

/**
 * Answers one tool call: logs the start record, decodes, runs the engine, maps the outcome to
 * the success result or the error envelope, logs the completion record with the same
 * mcpReqID (the envelope's diagnosticId). A cancelled call stays a protocol error: it throws,
 * and the server sends nothing for a cancelled request. An unknown tool throws the protocol
 * error -32602 (as the SDK answers it) before anything is logged or run.
 */
export async function runToolCall(call: ToolCall, ctx: ToolCallContext): Promise<CallToolResult> {
  const { tool, signal } = call;
  if (!isToolName(tool)) throw new ProtocolError(INVALID_PARAMS, `Unknown tool: ${tool}`);
  const mcpReqID = (ctx.newDiagnosticId ?? newDiagnosticId)();
  const started = performance.now();
  ctx.logger.info({ mcpReqID, tool }, 'tool call started');
  const durationMs = () => Math.round((performance.now() - started) * 1000) / 1000;

  let outcome: { ok: SuccessResult } | { failure: unknown };
  try {
    const args = decodeArguments(tool, call.rawArguments, {
      home: ctx.home ?? homedir(),
      duplicateKeys: call.duplicateKeys,
    });
    outcome = { ok: await HANDLERS[tool](ctx.service, args, signal, ctx.actor) };
  } catch (failure) {
    outcome = { failure };
  }

  if (signal.aborted) {
    const record: Record<string, unknown> = {
      mcpReqID,
      tool,
      outcome: 'CANCELLED',
      durationMs: durationMs(),
    };
    if ('failure' in outcome && !isCancellation(outcome.failure, signal))
      record.err = loggedError(outcome.failure, ctx.scrubber);
    ctx.logger.info(record, 'tool call completed');
    throw new ProtocolError(REQUEST_CANCELLED, 'Request was cancelled');
  }
  if ('ok' in outcome) {
    ctx.logger.info(
      { mcpReqID, tool, outcome: 'OK', durationMs: durationMs() },
      'tool call completed',
    );
    return successResult(outcome.ok, ctx.service);
  }
  const { error, cause } = envelopeFor(outcome.failure, mcpReqID, ctx);
  ctx.logger[levelFor(error.code)](
    {
      mcpReqID,
      tool,
      outcome: error.code,
      reason: error.reason,
      durationMs: durationMs(),
      err: loggedError(cause, ctx.scrubber),
    },
    'tool call completed',
  );
  return errorResult(error, ctx.service);
}

/** The abort reason itself carries nothing an operator needs. */
function isCancellation(failure: unknown, signal: AbortSignal): boolean {
  return failure === signal.reason || (failure instanceof Error && failure.name === 'AbortError');
}
