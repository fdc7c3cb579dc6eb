import { describe, expect, it } from 'vitest';
import { median, percentile, ratePerSecond, summarize } from '../bench/stats';

describe('bench statistics', () => {
  it('takes nearest-rank percentiles, always a measured sample', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 90)).toBe(90);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3], 50)).toBe(2);
  });

  it('refuses an empty series and an out-of-range percentile', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });

  it('summarises unsorted samples without reordering the caller’s array', () => {
    const samples = [30, 10, 20, 40];
    const summary = summarize(samples);
    expect(summary).toEqual({ count: 4, min: 10, p50: 20, p90: 40, p99: 40, max: 40, mean: 25 });
    expect(samples).toEqual([30, 10, 20, 40]);
    expect(summarize([])).toBeUndefined();
    expect(median([5, 1, 3])).toBe(3);
  });

  it('computes rates per second and zero for an empty span', () => {
    expect(ratePerSecond(50, 2000)).toBe(25);
    expect(ratePerSecond(5, 0)).toBe(0);
  });
});
