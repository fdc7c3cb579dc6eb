import { renderCliSuccess } from '@slivingdoc/envelope';
import type { Invocation } from '../config/types';
import { runOneShot } from '../runtime/one-shot';

type SyncInvocation = Extract<Invocation, { kind: 'pull' | 'commit' }>;

/**
 * `slivingdoc pull <path>` / `slivingdoc commit <path> -m <message>`: one operation, the
 * report on stdout (contract §12), exit 0 OK, 1 domain error, 2 refused, 3 incompatible store.
 */
export function runSync(invocation: SyncInvocation): Promise<number> {
  const { path, config } = invocation;
  return runOneShot(
    invocation,
    { probe: true, quiet: invocation.quiet, progress: true },
    async ({ service, color, onProgress }) => {
      const progress = onProgress === undefined ? {} : { onProgress };
      const result =
        invocation.kind === 'pull'
          ? await service.pull({ path, ...progress })
          : await service.commit({
              path,
              message: invocation.message,
              ...(config.actor !== undefined ? { actor: config.actor } : {}),
              ...progress,
            });
      return renderCliSuccess(result, { color });
    },
  );
}
