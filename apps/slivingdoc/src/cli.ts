import { parseInvocation } from './config/parse';
import { helpFor } from './help';
import { holdProcessWarnings } from './runtime/process-warnings';
import { asRefusal, refuse } from './runtime/refuse';
import { VERSION } from './version';

/**
 * The `slivingdoc` bin. Kept thin and cheap to load: `version` and `-h` load no engine,
 * MCP or AWS code; each command's module (and the AWS SDK, only with a bucket) loads on
 * demand.
 */
async function main(argv: string[]): Promise<number> {
  const os = await import('node:os');
  const invocation = await parseInvocation(argv, process.env, {
    cwd: process.cwd(),
    home: process.env.HOME || os.homedir(),
    userName: osUserName(os),
  });
  switch (invocation.kind) {
    case 'help':
      process.stdout.write(helpFor(invocation.command));
      return 0;
    case 'version':
      process.stdout.write(`slivingdoc ${VERSION}\n`);
      return 0;
    case 'refusal':
      return refuse(invocation);
    case 'serve':
      if (invocation.config.listen !== undefined)
        return (await import('./commands/serve-http')).runServeHttp(
          invocation.config,
          invocation.config.listen,
        );
      return (await import('./commands/serve')).runServe(invocation.config);
    case 'pull':
    case 'commit':
      return (await import('./commands/sync')).runSync(invocation);
    case 'status':
      return (await import('./commands/status')).runStatus(invocation);
    case 'log':
      return (await import('./commands/log')).runLog(invocation);
    case 'blame':
      return (await import('./commands/blame')).runBlame(invocation);
    case 'revert':
      return (await import('./commands/revert')).runRevert(invocation);
    case 'review':
      return (await import('./commands/review')).runReview(invocation);
    case 'proposals':
      return (await import('./commands/review')).runProposals(invocation);
    case 'approve':
      return (await import('./commands/review')).runApprove(invocation);
    case 'token':
      return (await import('./commands/token')).runToken(invocation.command, invocation.tokenFile);
    case 'view':
      return (await import('./commands/view')).runView(invocation);
  }
}

/** The OS user name (the CLI's default actor): the passwd entry, else `$USER`/`$LOGNAME`. */
function osUserName(os: typeof import('node:os')): string | undefined {
  try {
    return os.userInfo().username;
  } catch {
    // A container user without a passwd entry.
    return process.env.USER || process.env.LOGNAME || undefined;
  }
}

// A reader that stops early (`slivingdoc pull x | head -1`) closes the pipe: the operation
// still finishes and the exit status stays its own; only the rest of the report is dropped.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

holdProcessWarnings();
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  // Only a bug reaches here: every expected failure is a refusal or an envelope.
  (error: unknown) => {
    process.exitCode = refuse(asRefusal(error));
  },
);
