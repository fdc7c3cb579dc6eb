import type { Flags } from './command-line';

/** A setting as given: where it came from (`--bucket`, `SLIVINGDOC_BUCKET`) and its text. */
export interface GivenSetting {
  source: string;
  raw: string;
}

/** contract §12: an empty environment value counts as unset. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The value of a flag that takes one, by name (the app's own flags and the drivers'). */
export function flagValue(flags: Flags, flag: string): string | undefined {
  const value = (flags as Readonly<Record<string, unknown>>)[flag];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A scalar setting: the flag (last occurrence) wins over the environment variables, which
 * are tried in order.
 */
export function pick(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  flag: string,
  ...envNames: string[]
): GivenSetting | undefined {
  const fromFlag = flagValue(flags, flag);
  if (fromFlag !== undefined) return { source: `--${flag}`, raw: fromFlag };
  for (const name of envNames) {
    const fromEnv = envValue(env, name);
    if (fromEnv !== undefined) return { source: name, raw: fromEnv };
  }
  return undefined;
}
