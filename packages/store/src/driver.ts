import type { ObjectStore } from './object-store';

/**
 * The contract between a store driver and the app that configures it. A driver declares,
 * inside this package, everything the app needs and nothing the app must know about it: its
 * settings (flag, environment variables, help text, value rules), how it is selected, the
 * environment variables whose values are secrets, and how to open, describe and locate its
 * store. The app keeps one registry line per driver (docs/architecture.md, "Add a store
 * driver").
 */

/** What every store's configuration carries: the driver's kind and the key prefix. */
export interface StoreConfigBase {
  /** The registry key of the driver that made this configuration. */
  readonly kind: string;
  /** Key prefix (the empty string is the root of the bucket or directory). */
  readonly prefix: string;
}

/**
 * A value the driver refuses. The app names the source (`--bucket`, `SLIVINGDOC_BUCKET`) and,
 * when `echoValue` is true, the quoted value before `reason`; a setting that may hold a
 * credential (an endpoint URL) sets it false, so the value is never repeated.
 */
export class StoreSettingError extends Error {
  override readonly name = 'StoreSettingError';
  /** Whether the refused value may be shown to the user. */
  readonly echoValue: boolean;

  constructor(reason: string, opts: { echoValue: boolean }) {
    super(reason);
    this.echoValue = opts.echoValue;
  }
}

/** What a setting's rule may ask of the app while reading one value. */
export interface SettingContext {
  /**
   * Resolves a configured file-system path the way every path setting of the app is
   * resolved (`~/` is the home directory, a relative path is against the working directory).
   */
  resolvePath(raw: string): string;
}

/**
 * One setting of a driver: a flag that takes a value, the environment variables read in order
 * when the flag is absent (an empty value counts as unset), and its line of help.
 */
export interface StoreSetting<T = unknown> {
  /** Flag name without `--` (`bucket`). */
  readonly flag: string;
  /** Environment variables, in the order they are tried (`AWS_ENDPOINT_URL_S3`, …). */
  readonly env: readonly string[];
  /** The value's placeholder in help (`<name>`). */
  readonly placeholder: string;
  /** What the setting is, for help (`S3 bucket`); the app appends the variables and rules. */
  readonly help: string;
  /** Validates and normalises one non-empty value; throws {@link StoreSettingError}. */
  parse(raw: string, context: SettingContext): T;
}

/** A driver's settings by name. */
export type StoreSettings = Readonly<Record<string, StoreSetting>>;

/** The parsed value of each setting; `undefined` when neither its flag nor its variables are set. */
export type SettingValues<S extends StoreSettings> = {
  [K in keyof S]: (S[K] extends StoreSetting<infer T> ? T : never) | undefined;
};

/** What the app knows that a driver may need to finish its configuration. */
export interface DriverContext {
  /** The validated key prefix. */
  readonly prefix: string;
  /** The user's data directory (`$XDG_DATA_HOME`, else `~/.local/share`), absolute. */
  readonly dataHome: string;
}

/** Where a configured store is, as reports show it (never a credential). */
export interface StoreLocation {
  /** A directory, or a URL-like name such as `s3://<bucket>`. */
  readonly location: string;
  /** The endpoint the store talks to, when it is not the backend's own default. */
  readonly endpoint: string | null;
}

/**
 * A store driver. Every registered driver but one is selected by one of its own settings
 * (`selectedBy`: S3 by the bucket); the one without is the default, used when no other is
 * selected. Settings of a driver that is not selected are refused as flags and ignored as
 * environment variables (they are commonly set for other tools).
 */
export interface StoreDriver<
  C extends StoreConfigBase = StoreConfigBase,
  S extends StoreSettings = StoreSettings,
> {
  /** The registry key, equal to `kind` of every configuration it makes. */
  readonly kind: C['kind'];
  /** How refusals and help name the store (`embedded store`). */
  readonly title: string;
  /**
   * The setting whose presence selects this driver, and how a refusal names it when a setting
   * of this driver is given without it (`a bucket`). Absent on the default driver.
   */
  readonly selectedBy?: { readonly setting: string; readonly noun: string };
  /** Every setting, the selecting one included, in the order help lists and parsing reads them. */
  readonly settings: S;
  /** Environment variables whose literal values are secrets: the scrubber hides them. */
  readonly secretEnvVars: readonly string[];
  /** The configuration from the parsed settings (defaults applied). */
  configure(values: SettingValues<S>, context: DriverContext): C;
  /** Opens the configured store; loads the driver's implementation (and SDK) only now. */
  open(config: C): Promise<ObjectStore>;
  /** Where the store is, for reports; `redact` is the diagnostic scrubber. */
  describe(config: C, redact: (text: string) => string): StoreLocation;
  /**
   * A directory on this machine that the store owns, which must not overlap a workspace root
   * (the embedded store's directory); undefined for a remote store.
   */
  localDirectory(config: C): string | undefined;
}

/** contract §12: booleans are exactly `true`, `false`, `1`, `0` (a rule for any driver's setting). */
export function parseBooleanSetting(raw: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new StoreSettingError('is not a boolean (true, false, 1 or 0)', { echoValue: true });
}
