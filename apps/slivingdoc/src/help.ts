/** The `-h` texts: printed to stdout, exit 0 (docs/cli.md is the full reference). */
import type { StoreDriver } from '@slivingdoc/store';
import { defaultStoreDriver, selectorFlag, storeDrivers } from './config/store-registry';

/** One option line: the flag and its value in a column of 32, then what it does. */
const optionLine = (option: string, text: string): string => `  ${option.padEnd(31)} ${text}`;

/**
 * A driver setting's line: what it is, its variables, and when it applies (a selecting
 * setting names the default store; the other settings of a selected driver need it).
 */
function driverSettingLine(driver: StoreDriver, name: string): string {
  const setting = driver.settings[name]!;
  const selector = selectorFlag(driver);
  const rule =
    selector === undefined
      ? ''
      : driver.selectedBy?.setting === name
        ? `; none: the ${defaultStoreDriver.title}`
        : `, needs --${selector}`;
  return optionLine(
    `--${setting.flag} ${setting.placeholder}`,
    `${setting.help} (${setting.env.join(', ')})${rule}`,
  );
}

/** The selecting settings of every driver, then the prefix, then every other driver setting. */
const DRIVER_OPTIONS = [
  ...storeDrivers.flatMap((driver) =>
    driver.selectedBy ? [driverSettingLine(driver, driver.selectedBy.setting)] : [],
  ),
  optionLine(
    '--prefix <prefix>',
    'key prefix (SLIVINGDOC_PREFIX), default slivingdoc; --prefix= is the bucket root',
  ),
  ...storeDrivers.flatMap((driver) =>
    Object.keys(driver.settings)
      .filter((name) => name !== driver.selectedBy?.setting)
      .map((name) => driverSettingLine(driver, name)),
  ),
].join('\n');

const STORE_OPTIONS = `Store and notebook options (flags override environment variables, which override defaults):
${DRIVER_OPTIONS}
  --workspace-root <dir>          directories callers may address (SLIVINGDOC_WORKSPACE_ROOT)
  --private-root <dir>            server-owned state (SLIVINGDOC_PRIVATE_ROOT)
  --writable <paths>              writable set, repeatable, ':'-separated (SLIVINGDOC_WRITABLE)
  --read-only <paths>             read-only set, repeatable, ':'-separated (SLIVINGDOC_READ_ONLY)
  --commit-retries <0-100>        compare-and-swap retries (SLIVINGDOC_COMMIT_RETRIES), default 8
  --checkpoint-packs <n>          increments before a checkpoint (SLIVINGDOC_CHECKPOINT_PACKS), default 256
  --retained-checkpoints <0-64>   retained checkpoint chains (SLIVINGDOC_RETAINED_CHECKPOINTS), default 1
  --merge-additions <mode>        keep or conflict: concurrent insertions at one place (SLIVINGDOC_MERGE_ADDITIONS), default keep
  --actor <name>                  who publishes (SLIVINGDOC_ACTOR); default: the OS user name (serve: the MCP client's name)
  -h, --help                      print this help`;

const FOOTER = `Exit codes: 0 OK, 1 domain error, 2 usage or configuration refused, 3 incompatible store.
Logs go to stderr as JSON lines; LOG_LEVEL takes module=level pairs and a default (cli=warn,info);
pull, commit, status, log and revert write none unless LOG_LEVEL is set.`;

/** The global help. */
export const HELP = `Usage: slivingdoc <command> [options]

One living notebook shared by many agents and humans.

Commands:
  serve, s                       run the MCP server over stdio (tools notes_pull, notes_commit)
  serve --listen HOST:PORT       one hub over HTTP for many agents on this host, and the web view
  view --listen HOST:PORT        serve the web view of the notebook (history, diffs, blame)
  pull, p <path>                 bring the notebook directory <path> up to date
  commit, c <path> -m <message>  publish the edits in <path>
  status <path>                  unpublished changes, and how far <path> is behind the store
  log <path>                     the latest publications: generation, time, actor, message
  blame <path> <file>            who last changed each line of <file>, and when
  revert <path> --generation N   undo publication N, published as a new commit
  review set|show                whether agents' commits publish at once or wait for a person
  proposals list|show|approve|reject  the agents' commits waiting for a person (docs/review.md)
  token add|list|remove          the bearer tokens of serve --listen
  version, v, --version, -V      print the version

Run slivingdoc <command> --help for a command's own options.

${STORE_OPTIONS}
  -m, --message <message>         the commit message (commit, revert)

${FOOTER}
`;

const REPORT_OPTIONS = `  -q, --quiet                     print only the first and last line of the report`;

/** Each command's own help (`slivingdoc <command> --help`). */
const COMMAND_HELP: Record<string, string> = {
  serve: `Usage: slivingdoc serve [options]

Runs the MCP server over stdio with the tools notes_pull and notes_commit. Each client's
commits carry its clientInfo.name as their actor unless --actor is given.

With --listen, serves MCP over Streamable HTTP at http://HOST:PORT/mcp to many agents at once
instead, and the web view at http://HOST:PORT/: every request needs a token (slivingdoc token
add NAME). The token's name is the actor, and the token owns one directory, the same for all
its sessions and reconnects: W/NAME with --workspace-root W, else NAME in the hub's own
session directory (removed at exit when nothing in it is unpublished).

  --listen <host:port>            serve over HTTP (SLIVINGDOC_LISTEN); loopback unless --listen-public
  --listen-public                 allow a non-loopback address (traffic is not encrypted)
  --allow-origin <origin>         a browser origin let in, repeatable (SLIVINGDOC_ALLOWED_ORIGINS); default none
  --max-sessions <n>              live sessions; past it the least recently used idle one ends (SLIVINGDOC_MAX_SESSIONS), default 256
  --session-idle-timeout <s>      idle seconds that end a session (SLIVINGDOC_SESSION_IDLE_TIMEOUT), default 300
  --token-calls <n>               requests in progress per token (SLIVINGDOC_TOKEN_CALLS), default 16`,
  token: `Usage: slivingdoc token add NAME [--read-only] [--writable <paths>] [--read-only-paths <paths>]
                                [--review queue] [--reviewer]
       slivingdoc token list
       slivingdoc token remove NAME

Manages the bearer tokens of serve --listen, kept hashed in $XDG_CONFIG_HOME/slivingdoc/tokens.json
(else ~/.config/slivingdoc/tokens.json; SLIVINGDOC_TOKEN_FILE moves it). add prints the new token
once; its NAME is the actor of its sessions and names the one directory they all share
(a token reaches only that directory and below). Tokens are cheap: give two agents that
should not share a directory two tokens. A name that differs from an existing one only in
case is refused; a token removed and added again under its old name takes up its old directory.

  --read-only                     the token's sessions may pull but never commit
  --writable <paths>              the sessions' writable set (replaces the server's), repeatable
  --read-only-paths <paths>       the sessions' read-only set (replaces the server's), repeatable
  --review queue                  the token's commits always wait for a person (docs/review.md)
  --reviewer                      a person's token: the view's Approve and Reject; refused at /mcp`,
  pull: `Usage: slivingdoc pull <path> [options]

Brings the notebook directory <path> up to date: merges its unpublished edits onto the latest
accepted notebook and rewrites it with the result. Prints the changed files.

${REPORT_OPTIONS}`,
  commit: `Usage: slivingdoc commit <path> -m <message> [options]

Publishes the edits in <path>, merged with whatever others published meanwhile.

  -m, --message <message>         the commit message (required)
${REPORT_OPTIONS}`,
  status: `Usage: slivingdoc status <path> [options]

Shows the store, the accepted generation now and the directory's baseline (how many
publications behind), the unpublished changes, and the state: not pulled, clean, changed or
recovery pending. Read-only: changes nothing and downloads only the store's manifest.

  --json                          print one JSON object instead (docs/cli.md lists its fields)`,
  log: `Usage: slivingdoc log <path> [options]

Lists the latest publications still retained (newest first): generation, UTC time, actor and
the first line of the message.

  -n, --max-count <N>             how many publications, default 20
  --stat                          per-file insertions and deletions
  --full                          the whole message
  --json                          print one JSON object instead (docs/cli.md lists its fields)`,
  blame: `Usage: slivingdoc blame <path> <file> [options]

For every line of <file> (a notebook path, or a file inside <path>) at the accepted
generation: the publication that last changed it (generation, UTC time, actor), or "before
generation N" for a line older than the retained history.

  --json                          print one JSON object instead (docs/cli.md lists its fields)`,
  view: `Usage: slivingdoc view --listen HOST:PORT [options]

Serves the web view of the notebook: its files, history, per-publication diffs, blame, live
updates and revert. Prints one line at start: the URL with a fresh login token. Binds loopback
unless told otherwise (docs/view.md).

  --listen <HOST:PORT>            where to listen (required; port 0 picks a free one)`,
  revert: `Usage: slivingdoc revert <path> --generation N [options]

Undoes publication N (see slivingdoc log): merges its inverse onto the latest notebook through
the copy at <path> and publishes it as a new commit. <path> must have no unpublished edits.
Where later publications changed the same lines, conflict blocks are written into <path>:
resolve them, then slivingdoc commit.

  --generation <N>                the publication to undo (required)
  -m, --message <message>         default: "Revert generation N: <its first line>"
${REPORT_OPTIONS}`,
  review: `Usage: slivingdoc review set queue|direct [--actor NAME] [--paths P…] [options]
       slivingdoc review show [--json] [options]

The notebook's review setting, stored beside the notebook (docs/review.md). In queue mode an
agent's notes_commit stores a proposal that a person approves or rejects; direct (the default)
publishes at once. CLI commits and reverts are a person's and are never queued. Every server
applies a change from its next call.

  --actor <name>                  a rule for this actor only; binds hub tokens, not stdio clients
  --paths <p,…>                   the rule covers commits touching these paths (longest match)
  --json                          show: the setting as JSON`,
  proposals: `Usage: slivingdoc proposals list [--json] [options]
       slivingdoc proposals show ID [--json] [options]
       slivingdoc proposals approve ID [PATH] [--revision N] [options]
       slivingdoc proposals reject ID [--reason TEXT] [options]

The agents' proposals (docs/review.md). approve merges the change onto the latest notebook
checked against the clean, pulled copy at PATH (default: the current directory) and publishes
it once, authored by the agent, approved by --actor (default: your user name); PATH itself is
not written, its next pull brings the approved files in. reject publishes nothing;
the proposal's bytes stay readable with show.

  --revision <N>                  approve only if the proposal is still at revision N
  --reason <text>                 reject: told to the agent at its next call
  --json                          list, show, approve, reject: JSON
${REPORT_OPTIONS}`,
  version: `Usage: slivingdoc version (also v, --version, -V)

Prints slivingdoc <version>.`,
};

/** The help for `command` (its own text, then the shared options), or the global help. */
export function helpFor(command: string | undefined): string {
  const own = command === undefined ? undefined : COMMAND_HELP[command];
  if (own === undefined) return HELP;
  if (command === 'version' || command === 'token') return `${own}\n`;
  return `${own}\n\n${STORE_OPTIONS}\n\n${FOOTER}\n`;
}
