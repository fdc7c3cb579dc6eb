import { renderCliSuccess } from '@slivingdoc/envelope';
import type { Invocation } from '../config/types';
import { runOneShot } from '../runtime/one-shot';

/**
 * `slivingdoc revert <path> --generation N [-m M]`: publishes the inverse of publication N as
 * an ordinary commit; reports exactly as commit does.
 */
export function runRevert(invocation: Extract<Invocation, { kind: 'revert' }>): Promise<number> {
  const { path, config } = invocation;
  return runOneShot(
    invocation,
    { probe: true, quiet: invocation.quiet, progress: true },
    async ({ service, color, onProgress }) => {
      const result = await service.revert({
        path,
        generation: invocation.generation,
        ...(invocation.message !== undefined ? { message: invocation.message } : {}),
        ...(config.actor !== undefined ? { actor: config.actor } : {}),
        ...(onProgress === undefined ? {} : { onProgress }),
      });
      return renderCliSuccess(result, { color });
    },
  );
}
