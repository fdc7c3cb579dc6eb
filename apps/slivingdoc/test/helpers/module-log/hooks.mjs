// Module customization hooks (they run on Node's loader thread): log, then resolve unchanged.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(process.env.SLIVINGDOC_TEST_MODULE_LOG, `${resolved.url}\n`);
  return resolved;
}
