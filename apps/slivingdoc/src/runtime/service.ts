import {
  createNotebookService,
  FAILPOINTS_ENV,
  failpointsFromEnv,
  type NotebookService,
} from '@slivingdoc/engine';
import type { ObjectStore } from '@slivingdoc/store';
import type { AppConfig } from '../config/types';
import type { Logging } from '../logging';
import type { Roots } from './roots';

/**
 * How long one commit waits in total for other local processes' attempts on the same store
 * before racing without the gate (docs/engine.md, "Publication gate").
 */
const PUBLICATION_GATE_MS = 30_000;

/**
 * TEST ONLY, never a user setting: writers whose environment names different scopes use
 * different publication gates and groups, as writers on different hosts would (the multi-host
 * simulation of the tests and the bench). Unset in production.
 */
export const TEST_GATE_SCOPE_ENV = 'SLIVINGDOC_TEST_GATE_SCOPE';
/**
 * Test-only: `0` turns group commit off, so the bench can time a lone writer with and without
 * it in one run (group commit must add no latency to a lone writer). Never a user flag.
 */
export const TEST_GROUP_COMMIT_ENV = 'SLIVINGDOC_TEST_GROUP_COMMIT';
/**
 * Test-only: `always` consolidates P fully after every call (the random-kill soak and the
 * crash matrix reach the consolidation's kill windows without thousands of commits). Never a
 * user flag.
 */
export const TEST_CONSOLIDATE_ENV = 'SLIVINGDOC_TEST_CONSOLIDATE';

/**
 * Composes the engine from the validated configuration, the resolved roots and the store.
 * `sharedObjects`: one object database for every directory the process serves (`serve
 * --listen`; docs/engine.md, "One object database per store"). `readOnlyStore`: the probe
 * found the credentials can only read; the process runs as a reader (logged here, once) and
 * refuses every commit and revert until it is restarted (contract §7).
 */
export function startService(
  config: AppConfig,
  roots: Roots,
  store: ObjectStore,
  logging: Logging,
  opts: { sharedObjects?: boolean; readOnlyStore?: boolean } = {},
): Promise<NotebookService> {
  const readOnlyStore = opts.readOnlyStore ?? false;
  if (readOnlyStore)
    logging
      .module('app')
      .info(
        { readOnly: true },
        'the store credentials can only read: running as a reader, commits and reverts are refused until restart',
      );
  return createNotebookService({
    readOnlyStore,
    store,
    privateRoot: roots.privateRoot,
    workspaceRoot: roots.workspaceRoot,
    notebookDir: roots.notebookDir,
    writable: config.writable,
    readOnly: config.readOnly,
    commitRetries: config.commitRetries,
    checkpointPacks: config.checkpointPacks,
    retainedCheckpoints: config.retainedCheckpoints,
    mergeAdditions: config.mergeAdditions,
    logger: logging.module('engine'),
    publicationGateMs: PUBLICATION_GATE_MS,
    // The engine never reads the environment; the app arms the test failpoints from it.
    failpoints: failpointsFromEnv(process.env[FAILPOINTS_ENV]),
    // One CAS publishes every commit queued on the gate (docs/engine.md, "Group commit").
    groupCommit: process.env[TEST_GROUP_COMMIT_ENV] !== '0',
    gateScope: process.env[TEST_GATE_SCOPE_ENV] ?? '',
    consolidateAlways: process.env[TEST_CONSOLIDATE_ENV] === 'always',
    sharedObjects: opts.sharedObjects ?? false,
  });
}
