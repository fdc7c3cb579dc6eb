/** The `-h` text: printed to stdout, exit 0 (docs/cli.md is the full reference). */
export const HELP = `Usage: slivingdoc <command> [options]

One living notebook shared by many agents and humans.

Commands:
  serve, s                       run the MCP server over stdio (tools notes_pull, notes_commit)
  pull, p <path>                 bring the notebook directory <path> up to date
  commit, c <path> -m <message>  publish the edits in <path>
  version, v                     print the version

Options (flags override environment variables, which override defaults):
  --bucket <name>                 S3 bucket (SLIVINGDOC_BUCKET); none: the embedded store
  --prefix <prefix>               key prefix (SLIVINGDOC_PREFIX), default slivingdoc; --prefix= is the bucket root
  --region <region>               S3 region (AWS_REGION), needs --bucket
  --endpoint <url>                S3-compatible endpoint (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL), needs --bucket
  --path-style <true|false>       path-style S3 addressing (SLIVINGDOC_PATH_STYLE), needs --bucket
  --store-dir <dir>               embedded store directory (SLIVINGDOC_STORE_DIR)
  --workspace-root <dir>          directories callers may address (SLIVINGDOC_WORKSPACE_ROOT)
  --private-root <dir>            server-owned state (SLIVINGDOC_PRIVATE_ROOT)
  --writable <paths>              writable set, repeatable, ':'-separated (SLIVINGDOC_WRITABLE)
  --read-only <paths>             read-only set, repeatable, ':'-separated (SLIVINGDOC_READ_ONLY)
  --commit-retries <0-100>        compare-and-swap retries (SLIVINGDOC_COMMIT_RETRIES), default 8
  --checkpoint-packs <n>          increments before a checkpoint (SLIVINGDOC_CHECKPOINT_PACKS), default 1024
  --retained-checkpoints <0-64>   retained checkpoint chains (SLIVINGDOC_RETAINED_CHECKPOINTS), default 1
  --merge-additions <mode>        keep or conflict: concurrent insertions at one place (SLIVINGDOC_MERGE_ADDITIONS), default keep
  -m, --message <message>         the commit message (commit only)
  -h, --help                      print this help

Exit codes: 0 OK, 1 domain error, 2 usage or configuration refused, 3 incompatible store.
Logs go to stderr as JSON lines; LOG_LEVEL takes module=level pairs and a default (cli=warn,info).
`;
