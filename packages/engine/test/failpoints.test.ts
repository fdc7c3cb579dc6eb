import { describe, expect, it } from 'vitest';
import {
  FAILPOINT,
  FAILPOINT_RESUME_SIGNAL,
  FailpointRegistry,
  failpoint,
  failpointsFromEnv,
} from '../src/failpoints';

/** Settles on the next macrotask turn with whether `promise` has settled by then. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('failpoints', () => {
  it('a `pause` failpoint holds the operation until the process receives SIGUSR2', async () => {
    const points = failpointsFromEnv(`${FAILPOINT.afterScan}=pause`);
    const held = failpoint(points, FAILPOINT.afterScan);
    expect(await settledYet(held)).toBe(false);
    expect(process.listenerCount(FAILPOINT_RESUME_SIGNAL)).toBe(1);

    process.kill(process.pid, FAILPOINT_RESUME_SIGNAL);
    await held;
    // The barrier leaves no listener behind (a later SIGUSR2 would otherwise be swallowed).
    expect(process.listenerCount(FAILPOINT_RESUME_SIGNAL)).toBe(0);
  });

  it('one SIGUSR2 releases every operation paused at that moment; unarmed points never wait', async () => {
    const points = new FailpointRegistry().set(FAILPOINT.afterMerge, 'pause', 2);
    const first = failpoint(points, FAILPOINT.afterMerge);
    const second = failpoint(points, FAILPOINT.afterMerge);
    expect(points.hit(FAILPOINT.afterMerge)).toBeUndefined(); // fired twice: spent
    expect(points.hit(FAILPOINT.afterScan)).toBeUndefined();
    expect(await settledYet(Promise.race([first, second]))).toBe(false);
    process.kill(process.pid, FAILPOINT_RESUME_SIGNAL);
    await Promise.all([first, second]);
  });

  it('parses throw, kill and pause from the environment and refuses anything else', () => {
    expect(() =>
      failpointsFromEnv('after-scan=throw,after-cas-sent=kill,mid-materialize=pause'),
    ).not.toThrow();
    expect(() => failpointsFromEnv('after-scan=sleep')).toThrow(
      'SLIVINGDOC_FAILPOINTS: invalid entry "after-scan=sleep"',
    );
    expect(() => failpointsFromEnv('after-scan')).toThrow('invalid entry "after-scan"');
    expect(() => failpointsFromEnv('before-everything=pause')).toThrow('invalid entry');
  });

  it('an armed `throw` fails the operation with a FailpointError naming the stage', async () => {
    const points = failpointsFromEnv('after-fetch=throw');
    await expect(failpoint(points, FAILPOINT.afterFetch)).rejects.toMatchObject({
      name: 'FailpointError',
      failpoint: 'after-fetch',
    });
  });
});
