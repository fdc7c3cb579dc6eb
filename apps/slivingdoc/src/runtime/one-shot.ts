import { mkdir, stat } from 'node:fs/promises';
import type { NotebookService, ProgressListener } from '@slivingdoc/engine';
import {
  buildError,
  DomainError,
  internalError,
  isDomainError,
  newDiagnosticId,
  renderCliError,
  useColor,
} from '@slivingdoc/envelope';
import type { AppConfig, PathInvocation } from '../config/types';
import type { Logging } from '../logging';
import { quietReport } from '../report/quiet';
import { processLogging } from './process-logging';
import { createProgressLine } from './progress-line';
import { asRefusal, refuse } from './refuse';
import { configuredRoots } from './roots';
import { startService } from './service';
import { openStore, probeStore } from './store';

/** What a one-shot command's work gets. */
export interface OneShot {
  service: NotebookService;
  /** Whether the report may use colour (contract §12). */
  color: boolean;
  /** Progress for the engine; undefined unless stderr is a terminal. */
  onProgress: ProgressListener | undefined;
}

/** How a command runs. */
export interface OneShotOptions {
  /**
   * Whether the store must pass the compatibility probe first: commands that publish do; the
   * read-only status and log skip it, since it writes (and status downloads only `current`).
   */
  probe: boolean;
  /** `--quiet`: only the first and last line of the report. */
  quiet: boolean;
  /** Show progress on a terminal (pull, commit, revert). */
  progress: boolean;
}

/**
 * Runs one CLI command on one notebook directory: the report on stdout, exit 0 OK, 1 domain
 * error (its candid text), 2 refused, 3 incompatible store. `work` returns the success report.
 */
export async function runOneShot(
  invocation: PathInvocation,
  options: OneShotOptions,
  work: (oneShot: OneShot) => Promise<string>,
): Promise<number> {
  const { config, path } = invocation;
  const workspaceRoot = config.workspaceRoot ?? path;
  const privateRoot = config.privateRoot!; // parsing always sets it when a path is given
  const { scrubber, logging } = processLogging(privateRoot, { oneShot: true });
  const log = logging.module('cli');
  const sets = { readOnly: config.readOnly, writable: config.writable };
  const color = useColor(process.stdout, process.env);
  const progress = options.progress ? createProgressLine() : undefined;
  const print = (report: string) => {
    progress?.clear();
    process.stdout.write(options.quiet ? quietReport(report) : report);
  };

  const fail = (outcome: DomainError): number => {
    const diagnosticId = newDiagnosticId();
    const error = buildError(outcome, { diagnosticId, sets, scrubber });
    log.warn(
      {
        diagnosticId,
        command: invocation.kind,
        outcome: error.code,
        reason: error.reason,
        err: outcome.cause ?? outcome,
      },
      'command failed',
    );
    print(renderCliError(error, { color }));
    return 1;
  };

  // Only pull creates the directory (contract §2); for the others a missing directory was never
  // pulled, and when the workspace root is the path itself there is no root to resolve.
  if (invocation.kind !== 'pull' && workspaceRoot === path && !(await isDirectory(path))) {
    return fail(notPulled());
  }
  let started: Awaited<ReturnType<typeof start>>;
  try {
    if (invocation.kind === 'pull' && workspaceRoot === path)
      await mkdir(path, { recursive: true });
    started = await start(config, workspaceRoot, privateRoot, logging, options.probe);
  } catch (error) {
    return refuse(asRefusal(error), scrubber);
  }
  const { service } = started;
  try {
    print(await work({ service, color, onProgress: progress?.listener }));
    return 0;
  } catch (error) {
    return fail(isDomainError(error) ? error : internalError(error));
  } finally {
    // A commit that scheduled a checkpoint waits for it here (bounded), after the report.
    await service.close();
    await started.store.close?.();
  }
}

async function start(
  config: AppConfig,
  workspaceRoot: string,
  privateRoot: string,
  logging: Logging,
  probe: boolean,
) {
  const roots = await configuredRoots(config, workspaceRoot, privateRoot);
  const store = await openStore(config.store);
  const readOnlyStore = probe ? (await probeStore(store)).readOnly : false;
  return { store, service: await startService(config, roots, store, logging, { readOnlyStore }) };
}

function notPulled(): DomainError {
  return new DomainError({
    code: 'INVALID_REQUEST',
    reason: 'NOT_PULLED',
    message: 'This directory has never been pulled: run slivingdoc pull first.',
  });
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
