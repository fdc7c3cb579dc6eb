import { describeObjectStore } from '@slivingdoc/store/testing';
import { createMemoryStore } from '../src';

describeObjectStore('memory', async (prefix) => createMemoryStore({ prefix }));
