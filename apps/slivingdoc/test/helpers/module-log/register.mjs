// `node --import` this file to append the URL of every module the process resolves (ESM
// imports, static or dynamic) to the file named by SLIVINGDOC_TEST_MODULE_LOG.
// Each write to stdout first appends the CommonJS modules loaded since the previous write
// (Node 20's hook does not see `require`; the require cache does) and then a `# stdout`
// line, so a test can tell what was loaded before the first answer (a server's initialize
// response) left the process.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

register('./hooks.mjs', import.meta.url);

const requireCache = createRequire(import.meta.url).cache;
const listed = new Set();
const write = process.stdout.write;
process.stdout.write = function (...args) {
  const loaded = Object.keys(requireCache).filter((path) => !listed.has(path));
  for (const path of loaded) listed.add(path);
  const lines = loaded.map((path) => `${pathToFileURL(path).href}\n`).join('');
  appendFileSync(process.env.SLIVINGDOC_TEST_MODULE_LOG, `${lines}# stdout\n`);
  return write.apply(this, args);
};
