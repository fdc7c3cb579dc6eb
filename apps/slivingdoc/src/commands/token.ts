import { addToken, listTokens, removeToken, TokenFileError } from '@slivingdoc/http';
import { configuration } from '../config/refusal';
import type { TokenCommandLine } from '../config/types';
import { refuse } from '../runtime/refuse';
import { tokenFilePath } from '../runtime/token-file';

/**
 * `slivingdoc token add|list|remove` (docs/hosts.md, "Tokens"). `add` prints the new token
 * once, alone on stdout, so `TOKEN=$(slivingdoc token add alice)` captures it; the file keeps
 * only its hash. Exit 0, or 2 with a configuration refusal.
 */
export function runToken(command: TokenCommandLine, configuredFile: string | undefined): number {
  const tokenFile = tokenFilePath(configuredFile);
  try {
    switch (command.action) {
      case 'add': {
        const token = addToken(tokenFile, command.name, {
          readOnly: command.readOnly,
          ...(command.writable === undefined ? {} : { writable: command.writable }),
          ...(command.readOnlyPaths === undefined ? {} : { readOnlyPaths: command.readOnlyPaths }),
          ...(command.review === undefined ? {} : { review: command.review }),
          ...(command.reviewer ? { reviewer: true } : {}),
        });
        process.stdout.write(`${token}\n`);
        process.stderr.write(
          `slivingdoc: token "${command.name}" added; it is shown only this once (send it as Authorization: Bearer <token>)\n`,
        );
        return 0;
      }
      case 'list': {
        for (const token of listTokens(tokenFile)) process.stdout.write(`${describe(token)}\n`);
        return 0;
      }
      case 'remove': {
        if (!removeToken(tokenFile, command.name))
          throw new TokenFileError(`no token named "${command.name}"`);
        process.stderr.write(`slivingdoc: token "${command.name}" removed\n`);
        return 0;
      }
    }
  } catch (error) {
    if (error instanceof TokenFileError) return refuse(configuration(error.message).toRefusal());
    throw error;
  }
}

/** One line per token: name, rights and creation time (never the token or its hash). */
function describe(token: ReturnType<typeof listTokens>[number]): string {
  const rights = [token.reviewer ? 'reviewer' : token.readOnly ? 'read-only' : 'read-write'];
  if (token.review !== undefined) rights.push(`review=${token.review}`);
  if (token.writable !== undefined) rights.push(`writable=${token.writable.join(':')}`);
  if (token.readOnlyPaths !== undefined)
    rights.push(`read-only-paths=${token.readOnlyPaths.join(':')}`);
  return `${token.name}\t${rights.join(' ')}\t${token.created}`;
}
