import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tooling package's directory: children start there so `tsx` resolves. */
export const toolingDir = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * Node arguments that run a TypeScript entry against the workspace packages' sources
 * (the `@slivingdoc/source` export condition), so children need no build.
 */
export function tsxChildArgs(): string[] {
  return ['--import', 'tsx', '--conditions=@slivingdoc/source'];
}
