/** Where the token file is by default (exported through `token-file.ts`). */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The token file: `$XDG_CONFIG_HOME/slivingdoc/tokens.json` when XDG_CONFIG_HOME is an
 * absolute path (the XDG base directory rule: a relative one is ignored), else
 * `~/.config/slivingdoc/tokens.json`.
 */
export function defaultTokenFilePath(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.config');
  return join(base, 'slivingdoc', 'tokens.json');
}
