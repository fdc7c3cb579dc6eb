// `node --import` this file to append the URL of every module the process resolves (ESM
// imports, static or dynamic) to the file named by SLIVINGDOC_TEST_MODULE_LOG.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
