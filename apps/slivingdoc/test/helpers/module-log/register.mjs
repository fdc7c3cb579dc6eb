// `node --import` this file to append the URL of every module the process resolves (ESM
// imports, static or dynamic) to the file named by SLIVINGDOC_TEST_MODULE_LOG.
// Each write to stdout appends a `# stdout` line, so a test can tell what was resolved before
// the first answer (a server's initialize response) left the process. (The hooks' own loader
// thread loads worker_threads, so built-ins loaded by `require` cannot be told apart here.)
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);

const write = process.stdout.write;
process.stdout.write = function (...args) {
  appendFileSync(process.env.SLIVINGDOC_TEST_MODULE_LOG, '# stdout\n');
  return write.apply(this, args);
};
