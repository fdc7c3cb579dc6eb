import { parseCommandLine } from './command-line';
import { RefusalError } from './refusal';
import type { Invocation, ParseContext, Refusal } from './types';

/**
 * Parses a command line and environment into what to run, or a refusal (contract §12). Reads
 * nothing but its arguments and touches no file; the value rules (and the path-set policy
 * they need) load only for a command that runs, so `version` and `-h` stay instant.
 */
export async function parseInvocation(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  context: ParseContext,
): Promise<Invocation | Refusal> {
  try {
    const commandLine = parseCommandLine(argv);
    if (commandLine.kind === 'help' || commandLine.kind === 'version') return commandLine;
    const { buildInvocation } = await import('./build');
    return buildInvocation(commandLine, env, context);
  } catch (error) {
    if (error instanceof RefusalError) return error.toRefusal();
    throw error;
  }
}
