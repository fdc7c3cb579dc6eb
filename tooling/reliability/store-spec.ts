import { createNotebookService } from '@slivingdoc/engine';
import type { SuccessResult } from '@slivingdoc/envelope';
import { createEmbeddedStore, createS3Store, type ObjectStore, runProbe } from '@slivingdoc/store';
import type { S3TestEnv } from '@slivingdoc/testkit/s3-env';

/** Which store a reliability child process opens: serialisable, so it crosses process boundaries. */
export type StoreSpec =
  | { kind: 'embedded'; dir: string; prefix: string }
  | ({ kind: 's3'; prefix: string } & S3TestEnv);

/**
 * Opens the store a spec names with the same factories the app uses, and runs the
 * compatibility probe on S3 as the app does at startup (it settles the ETag form).
 */
export async function openStore(spec: StoreSpec): Promise<ObjectStore> {
  if (spec.kind === 'embedded') return createEmbeddedStore({ dir: spec.dir, prefix: spec.prefix });
  const store = createS3Store({
    bucket: spec.bucket,
    prefix: spec.prefix,
    endpoint: spec.endpoint,
    region: 'us-east-1',
    pathStyle: true,
    credentials: { accessKeyId: spec.accessKeyId, secretAccessKey: spec.secretAccessKey },
  });
  const probe = await runProbe(store);
  if (!probe.ok) throw new Error(`the S3 store failed the compatibility probe: ${probe.reason}`);
  return store;
}

/**
 * Opens a notebook service on `spec` for one pull (or commit) and closes it: set-up and
 * witness reads of the suites that keep real processes for the calls under test. Resolves
 * with a commit's result.
 */
export async function withService(
  at: { spec: StoreSpec; privateRoot: string; workspaceRoot: string; notebookDir: string },
  op: { commit?: string; viaTools?: boolean },
): Promise<SuccessResult | undefined> {
  const store = await openStore(at.spec);
  const service = await createNotebookService({
    store,
    privateRoot: at.privateRoot,
    workspaceRoot: at.workspaceRoot,
    notebookDir: at.notebookDir,
    failpoints: { hit: () => undefined },
  });
  try {
    if (op.commit === undefined) await service.pull({});
    // `viaTools`: the commit an agent's notes_commit makes (a review setting may queue it).
    else return await service.commit({ message: op.commit, viaTools: op.viaTools });
    return undefined;
  } finally {
    await service.close();
    await store.close?.();
  }
}
