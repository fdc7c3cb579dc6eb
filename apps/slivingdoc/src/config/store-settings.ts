import { type StoreDriver, StoreSettingError } from '@slivingdoc/store';
import type { Flags } from './command-line';
import { dataHome } from './paths';
import { configuration } from './refusal';
import { flagValue, type GivenSetting, pick } from './setting-source';
import { defaultStoreDriver, type StoreConfig, selectorFlag, storeDrivers } from './store-registry';
import type { ParseContext } from './types';
import { quote, resolveUserPath } from './values';

/** The first driver (registry order) whose selecting setting is given, else the default one. */
function selectedDriver(flags: Flags, env: NodeJS.ProcessEnv): StoreDriver {
  for (const driver of storeDrivers) {
    if (driver.selectedBy === undefined) continue;
    const selector = driver.settings[driver.selectedBy.setting]!;
    if (pick(flags, env, selector.flag, ...selector.env) !== undefined) return driver;
  }
  return defaultStoreDriver;
}

/**
 * Refuses a flag of a driver that is not selected (its environment variables are ignored:
 * they are commonly set for other tools). With the default driver in use, the refusal names
 * what the flag needs (`--region needs a bucket (--bucket)`); with a selected one, what the
 * flag applies to (`--store-dir applies only to the embedded store, not with --bucket`).
 */
function refuseForeignFlags(flags: Flags, selected: StoreDriver): void {
  for (const driver of storeDrivers) {
    if (driver === selected) continue;
    for (const setting of Object.values(driver.settings)) {
      if (flagValue(flags, setting.flag) === undefined) continue;
      const given = `--${setting.flag}`;
      const selectedBy = selectorFlag(selected);
      if (selectedBy !== undefined) {
        throw configuration(
          `${given} applies only to the ${driver.title}, not with --${selectedBy}`,
        );
      }
      throw configuration(`${given} needs ${driver.selectedBy!.noun} (--${selectorFlag(driver)})`);
    }
  }
}

/** One setting's value through the driver's rule; its refusal names the source. */
function parseSetting(
  driver: StoreDriver,
  name: string,
  given: GivenSetting,
  context: ParseContext,
): unknown {
  try {
    return driver.settings[name]!.parse(given.raw, {
      resolvePath: (raw) => resolveUserPath(given.source, raw, context.cwd, context.home),
    });
  } catch (error) {
    if (!(error instanceof StoreSettingError)) throw error;
    const value = error.echoValue ? `${quote(given.raw)} ` : '';
    throw configuration(`${given.source}: ${value}${error.message}`);
  }
}

/**
 * contract §7/§12: the store a process uses, from the registered drivers. `prefix` is validated
 * already; every setting of the selected driver is read in its declared order.
 */
export function buildStoreConfig(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  context: ParseContext,
  prefix: string,
): StoreConfig {
  const driver = selectedDriver(flags, env);
  refuseForeignFlags(flags, driver);
  const values: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(driver.settings)) {
    const given = pick(flags, env, setting.flag, ...setting.env);
    values[name] = given === undefined ? undefined : parseSetting(driver, name, given, context);
  }
  return driver.configure(values, {
    prefix,
    dataHome: dataHome(env, context.home),
  }) as StoreConfig;
}
