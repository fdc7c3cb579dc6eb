import { describe, expect, it } from 'vitest';
import { s3TestEnv } from '../src/s3-env';
import { seededRandom } from '../src/seeded-random';

describe('seededRandom', () => {
  it('repeats its sequence for a seed and differs across seeds', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    for (const value of draw(7)) expect(value >= 0 && value < 1).toBe(true);
  });

  it('keeps its sequence, so a seed recorded by a failing run still reproduces it', () => {
    // Pinned first draw for seed 1 (mulberry32 as published by its author, bryc).
    expect(seededRandom(1)()).toBeCloseTo(0.6270739405881613, 15);
  });
});

describe('s3TestEnv', () => {
  const full = {
    SLIVINGDOC_TEST_S3_ENDPOINT: 'http://127.0.0.1:7480',
    SLIVINGDOC_TEST_S3_ACCESS_KEY: 'a',
    SLIVINGDOC_TEST_S3_SECRET_KEY: 's',
    SLIVINGDOC_TEST_S3_BUCKET: 'b',
  };

  it('reads the coordinates', () => {
    expect(s3TestEnv(full)).toEqual({
      endpoint: 'http://127.0.0.1:7480',
      accessKeyId: 'a',
      secretAccessKey: 's',
      bucket: 'b',
    });
  });

  it('fails loudly naming what is missing', () => {
    expect(() => s3TestEnv({})).toThrow(/SLIVINGDOC_TEST_S3_ENDPOINT unset/);
    expect(() => s3TestEnv({ ...full, SLIVINGDOC_TEST_S3_BUCKET: undefined })).toThrow(
      /SLIVINGDOC_TEST_S3_BUCKET unset/,
    );
  });
});
