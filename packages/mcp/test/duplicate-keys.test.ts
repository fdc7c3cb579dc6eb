import { describe, expect, it } from 'vitest';
import { DUPLICATE_MARKS_KEPT, DuplicateKeyLedger } from '../src/duplicate-keys';

describe('DuplicateKeyLedger', () => {
  it('consumes a mark once, and tells 1 from "1"', () => {
    const ledger = new DuplicateKeyLedger();
    ledger.mark(1);
    expect(ledger.consume('1')).toBe(false);
    expect(ledger.consume(1)).toBe(true);
    expect(ledger.consume(1)).toBe(false);
  });

  it('keeps a bounded number of marks however many requests are never consumed', () => {
    const ledger = new DuplicateKeyLedger();
    for (let id = 0; id < DUPLICATE_MARKS_KEPT * 5; id += 1) ledger.mark(id);
    expect(ledger.size).toBe(DUPLICATE_MARKS_KEPT);
    // The newest marks are the ones kept: a request still in flight finds its mark.
    expect(ledger.consume(DUPLICATE_MARKS_KEPT * 5 - 1)).toBe(true);
    expect(ledger.consume(0)).toBe(false);
  });
});
