import { homedir } from 'node:os';
import { defaultTokenFilePath } from '@slivingdoc/http';

/**
 * The token file of `serve --listen` and `slivingdoc token`: `SLIVINGDOC_TOKEN_FILE` when the
 * configuration named one, else `$XDG_CONFIG_HOME/slivingdoc/tokens.json` or
 * `~/.config/slivingdoc/tokens.json` (the home as the command line resolves it).
 */
export function tokenFilePath(configured: string | undefined): string {
  return configured ?? defaultTokenFilePath(process.env, process.env.HOME || homedir());
}
