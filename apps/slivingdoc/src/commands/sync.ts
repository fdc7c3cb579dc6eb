import { mkdir, stat } from 'node:fs/promises';
import {
  buildError,
  DomainError,
  internalError,
  isDomainError,
  newDiagnosticId,
  renderCliError,
  renderCliSuccess,
  type SuccessResult,
  useColor,
} from '@slivingdoc/envelope';
import type { AppConfig, Invocation } from '../config/types';
import { processLogging } from '../runtime/process-logging';
import { asRefusal, refuse } from '../runtime/refuse';
import { configuredRoots } from '../runtime/roots';
import { startService } from '../runtime/service';
import { openStore, probeStore } from '../runtime/store';

type SyncInvocation = Extract<Invocation, { kind: 'pull' | 'commit' }>;

/**
 * `slivingdoc pull <path>` / `slivingdoc commit <path> -m <message>`: one operation, the
 * report on stdout (SPEC §12), exit 0 OK, 1 domain error, 2 refused, 3 incompatible store.
 */
export async function runSync(invocation: SyncInvocation): Promise<number> {
  const { config, path } = invocation;
  const workspaceRoot = config.workspaceRoot ?? path;
  const privateRoot = config.privateRoot!; // parsing always sets it when a path is given
  const { scrubber, logging } = processLogging(privateRoot);
  const log = logging.module('cli');
  const sets = { readOnly: config.readOnly, writable: config.writable };
  const color = useColor(process.stdout, process.env);

  const report = (outcome: SuccessResult | DomainError): number => {
    if (!(outcome instanceof DomainError)) {
      process.stdout.write(renderCliSuccess(outcome, { color }));
      return 0;
    }
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
    process.stdout.write(renderCliError(error, { color }));
    return 1;
  };

  // A commit of a missing directory is NOT_PULLED and creates nothing (SPEC §2); when the
  // workspace root is the path itself there is no root to resolve, so answer here.
  if (invocation.kind === 'commit' && workspaceRoot === path && !(await isDirectory(path))) {
    return report(notPulled());
  }
  let started: Awaited<ReturnType<typeof start>>;
  try {
    if (invocation.kind === 'pull' && workspaceRoot === path)
      await mkdir(path, { recursive: true });
    started = await start(config, workspaceRoot, privateRoot, logging);
  } catch (error) {
    return refuse(asRefusal(error), scrubber);
  }
  const { service } = started;
  try {
    const result =
      invocation.kind === 'pull'
        ? await service.pull({ path })
        : await service.commit({ path, message: invocation.message });
    return report(result);
  } catch (error) {
    return report(isDomainError(error) ? error : internalError(error));
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
  logging: ReturnType<typeof processLogging>['logging'],
) {
  const roots = await configuredRoots(config, workspaceRoot, privateRoot);
  const store = await openStore(config.store);
  await probeStore(store);
  return { store, service: await startService(config, roots, store, logging) };
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
