/** The in-process exclusion between calls and a consolidation of their object database. */
import { describe, expect, it } from 'vitest';
import { AccessGate } from '../src/notebook/access';

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('AccessGate', () => {
  it('an exclusive hold waits for every shared hold; calls arriving meanwhile wait behind it', async () => {
    const gate = new AccessGate();
    const events: string[] = [];
    const first = await gate.shared();
    const second = await gate.shared();
    const exclusive = gate.exclusive().then((release) => {
      events.push('exclusive');
      return release;
    });
    const late = gate.shared().then((release) => {
      events.push('late call');
      return release;
    });
    await settle();
    expect(events).toEqual([]);
    first();
    await settle();
    expect(events).toEqual([]);
    second();
    const release = await exclusive;
    await settle();
    expect(events).toEqual(['exclusive']);
    release();
    (await late)();
    expect(events).toEqual(['exclusive', 'late call']);
  });

  it('exclusive holds take turns; a release is idempotent', async () => {
    const gate = new AccessGate();
    const one = await gate.exclusive();
    let twoHeld = false;
    const two = gate.exclusive().then((release) => {
      twoHeld = true;
      return release;
    });
    one();
    one();
    (await two)();
    expect(twoHeld).toBe(true);
    // Idle again: both kinds are granted at once.
    (await gate.shared())();
    (await gate.exclusive())();
  });
});
