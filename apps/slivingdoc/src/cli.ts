import { parseInvocation } from './config/parse';
import { HELP } from './help';
import { asRefusal, refuse } from './runtime/refuse';
import { VERSION } from './version';

/**
 * The `slivingdoc` bin. Kept thin and cheap to load: `version` and `-h` load no engine,
 * MCP or AWS code; each command's module (and the AWS SDK, only with a bucket) loads on
 * demand.
 */
async function main(argv: string[]): Promise<number> {
  const invocation = await parseInvocation(argv, process.env, {
    cwd: process.cwd(),
    home: process.env.HOME || (await import('node:os')).homedir(),
  });
  switch (invocation.kind) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      process.stdout.write(`slivingdoc ${VERSION}\n`);
      return 0;
    case 'refusal':
      return refuse(invocation);
    case 'serve':
      return (await import('./commands/serve')).runServe(invocation.config);
    case 'pull':
    case 'commit':
      return (await import('./commands/sync')).runSync(invocation);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  // Only a bug reaches here: every expected failure is a refusal or an envelope.
  (error: unknown) => {
    process.exitCode = refuse(asRefusal(error));
  },
);
