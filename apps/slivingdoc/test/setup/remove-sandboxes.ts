/**
 * Registered before every test file's own hooks, so it runs after them (vitest runs `afterAll`
 * hooks last-registered first): servers the file closes in its hooks are gone by then.
 */
import { afterAll } from 'vitest';
import { removeSandboxes } from '../helpers/bin';

afterAll(removeSandboxes);
