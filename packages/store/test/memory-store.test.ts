import { createMemoryStore } from '../src';
import { describeObjectStore } from './contract/describe-object-store';

describeObjectStore('memory', async (prefix) => createMemoryStore({ prefix }));
