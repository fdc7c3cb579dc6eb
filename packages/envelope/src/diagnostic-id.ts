import { randomBytes } from 'node:crypto';

/** A fresh diagnosticId: 16 lowercase hex characters from a cryptographic source. */
export function newDiagnosticId(): string {
  return randomBytes(8).toString('hex');
}

/** True when `id` has the diagnosticId form (16 lowercase hex characters). */
export function isDiagnosticId(id: string): boolean {
  return /^[0-9a-f]{16}$/.test(id);
}
