import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeObjectStore } from '@slivingdoc/store/testing';
import { afterAll, beforeAll } from 'vitest';
import { createEmbeddedStore } from '../src';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slivingdoc-embedded-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeObjectStore('embedded', (prefix) => createEmbeddedStore({ dir, prefix }));
