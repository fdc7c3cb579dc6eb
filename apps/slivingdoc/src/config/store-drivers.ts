import { embeddedStoreDriver, s3StoreDriver } from '@slivingdoc/store';

/**
 * The store drivers, keyed by kind: one line per driver (docs/architecture.md, "Add a store
 * driver"); everything else about drivers is derived from it in `store-registry.ts`. Order
 * matters: help lists the drivers' settings in it, and when the selecting settings of several
 * drivers are given, the first listed wins (the others' flags are then refused).
 */
export const STORE_DRIVERS = {
  s3: s3StoreDriver,
  embedded: embeddedStoreDriver,
} as const;
