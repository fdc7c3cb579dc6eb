import type { StoreDriver } from '@slivingdoc/store';
import { STORE_DRIVERS } from './store-drivers';

type Registered = (typeof STORE_DRIVERS)[keyof typeof STORE_DRIVERS];

/** Where the accepted notebook lives: the configuration one of the drivers made. */
export type StoreConfig = ReturnType<Registered['configure']>;

/** Every registered driver, in registry order, seen through the common contract. */
export const storeDrivers: readonly StoreDriver[] = Object.values(STORE_DRIVERS);

/** The driver that made `config`. */
export function driverOf(config: StoreConfig): StoreDriver {
  return (STORE_DRIVERS as Readonly<Record<string, StoreDriver>>)[config.kind]!;
}

/** The one driver without a selecting setting: used when no other driver is selected. */
export const defaultStoreDriver: StoreDriver = (() => {
  const defaults = storeDrivers.filter((driver) => driver.selectedBy === undefined);
  if (defaults.length !== 1) throw new Error('exactly one store driver must be the default');
  return defaults[0]!;
})();

/** The flag of a driver's selecting setting (`bucket`); undefined for the default driver. */
export function selectorFlag(driver: StoreDriver): string | undefined {
  return driver.selectedBy && driver.settings[driver.selectedBy.setting]?.flag;
}

/** The environment variables every registered driver declares secret, for the scrubber. */
export const STORE_SECRET_ENV_VARS: readonly string[] = [
  ...new Set(storeDrivers.flatMap((driver) => driver.secretEnvVars)),
];
