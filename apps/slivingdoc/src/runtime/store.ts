import type { ObjectStore } from '@slivingdoc/store';
import { RefusalError } from '../config/refusal';
import { driverOf } from '../config/store-registry';
import type { StoreConfig } from '../config/types';

/**
 * Opens the configured store through its driver, which loads its implementation (and the S3
 * driver the AWS SDK) only now, so `version` and an embedded `serve` start without it.
 */
export function openStore(config: StoreConfig): Promise<ObjectStore> {
  return driverOf(config).open(config);
}

/** The embedded store's local errno codes that are no incompatibility, with their detail. */
const LOCAL_STORE_FAILURES: Readonly<Record<string, string>> = {
  ENOSPC: 'disk full',
  EDQUOT: 'disk full',
  EROFS: 'read-only file system',
};

/** What the probe found these credentials may do: `readOnly`, read but not write. */
export interface StoreAccess {
  readOnly: boolean;
}

/**
 * contract §7: every command that touches the store first proves it honours create-if-absent
 * and compare-and-swap. A definite wrong answer (or being unable to run the probe) refuses
 * startup with INCOMPATIBLE_STORE (exit 3); a store that gave no trustworthy answer within
 * the probe's retry budget refuses it as `store unreachable` (exit 1, docs/cli.md).
 * Credentials whose first write was refused with AccessDenied run as a reader when they can
 * read `current` (`readOnly`), and refuse startup (exit 2) when they cannot.
 */
export async function probeStore(store: ObjectStore): Promise<StoreAccess> {
  const { runProbe } = await import('@slivingdoc/store');
  let outcome: Awaited<ReturnType<typeof runProbe>>;
  try {
    outcome = await runProbe(store);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new RefusalError('INCOMPATIBLE_STORE', `the compatibility probe failed: ${detail}`);
  }
  if (outcome.ok) return { readOnly: false };
  if (outcome.verdict === 'read-only') return { readOnly: true };
  if (outcome.verdict === 'denied') {
    throw new RefusalError(
      'startup',
      `the store's credentials may neither write nor read this prefix: ${outcome.reason}`,
    );
  }
  const local =
    outcome.code !== undefined && Object.hasOwn(LOCAL_STORE_FAILURES, outcome.code)
      ? LOCAL_STORE_FAILURES[outcome.code]
      : undefined;
  if (local !== undefined) {
    // The embedded store's own disk refused the write: nothing about the store is wrong.
    throw new RefusalError('startup', `the store directory cannot be written: ${local}`);
  }
  if (outcome.verdict === 'unreachable') {
    throw new RefusalError(
      'store unreachable',
      `the compatibility probe could not reach the store: ${outcome.reason}`,
    );
  }
  throw new RefusalError(
    'INCOMPATIBLE_STORE',
    `the store failed the compatibility probe: ${outcome.reason}`,
  );
}
