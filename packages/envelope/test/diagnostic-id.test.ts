import { describe, expect, it } from 'vitest';
import { isDiagnosticId, newDiagnosticId } from '../src';

describe('newDiagnosticId', () => {
  it('is 16 lowercase hex characters, fresh each time', () => {
    const ids = Array.from({ length: 1000 }, newDiagnosticId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(isDiagnosticId(ids[0] ?? '')).toBe(true);
    expect(isDiagnosticId('0011223344556677x')).toBe(false);
  });
});
