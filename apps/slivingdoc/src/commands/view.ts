import type { Invocation } from '../config/types';

/** `slivingdoc view --listen HOST:PORT`: not built yet. */
export async function runView(_invocation: Extract<Invocation, { kind: 'view' }>): Promise<number> {
  return 2;
}
