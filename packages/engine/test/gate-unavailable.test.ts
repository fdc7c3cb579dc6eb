/**
 * The publication gate is an optimisation: when its lock cannot be taken at all (here a fault
 * injected into `acquireLock`, as a lock directory path too long for a socket would raise),
 * the commit publishes without it and says so in a warning that names no path.
 */
import { createMemoryStore } from '@slivingdoc/store';
import { describe, expect, it, vi } from 'vitest';
import { participant, put } from './helpers';

vi.mock('@slivingdoc/workspace', async (importOriginal) => ({
  ...(await importOriginal<typeof import('@slivingdoc/workspace')>()),
  acquireLock: async () => {
    throw Object.assign(new Error('listen ENAMETOOLONG /run/user/1000/slivingdoc/0123.sock'), {
      code: 'ENAMETOOLONG',
    });
  },
}));

describe('publication gate that cannot be taken', () => {
  it('publishes without it and warns with the error code only', async () => {
    const warnings: { obj: object; msg: string }[] = [];
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (obj: object, msg: string) => warnings.push({ obj, msg }),
    };
    const store = createMemoryStore({ prefix: 'gate-unavailable' });
    const alice = await participant(store, { publicationGateMs: 10_000, logger });
    await alice.service.pull({});
    await put(alice.dir, 'a.md', 'a\n');

    const result = await alice.service.commit({ message: 'a' });

    expect(result).toMatchObject({ code: 'OK', generation: 1 });
    expect(warnings).toEqual([
      {
        obj: { code: 'ENAMETOOLONG' },
        msg: 'publication gate unavailable; attempting without it',
      },
    ]);
  });
});
