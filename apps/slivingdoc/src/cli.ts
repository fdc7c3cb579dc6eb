import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from '@slivingdoc/mcp';
import pkg from '../package.json' with { type: 'json' };

const USAGE = `Usage: slivingdoc <command> [options]

Commands:
  serve, s                     run the MCP server over stdio
  pull, p <path>               pull the notebook into <path>
  commit, c <path> -m <msg>    commit the edits in <path>
  version, v                   print the version
`;

function serve(): void {
  const session = mkdtempSync(join(tmpdir(), 'slivingdoc-'));
  const notebookDir = join(session, 'notebook');
  mkdirSync(notebookDir, { mode: 0o700 });
  mkdirSync(join(session, 'private'), { mode: 0o700 });
  const server = createMcpServer({
    version: pkg.version,
    notebookDir: realpathSync(notebookDir),
    // Walking skeleton: the engine is not wired in yet.
    callTool: async () => {
      const diagnosticId = randomBytes(8).toString('hex');
      const error = {
        code: 'ENGINE_FAILED',
        reason: 'INTERNAL_ERROR',
        action: 'RETRY',
        diagnosticId,
        retryable: true,
        message: 'The engine is not available in this build.',
        files: [],
        readOnly: [],
        writable: [],
      };
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `ENGINE_FAILED · INTERNAL_ERROR\n${error.message}\naction: RETRY\nretryable: true\ndiagnosticId: ${diagnosticId}`,
          },
        ],
        structuredContent: error,
      };
    },
  });
  void server.connect(new StdioServerTransport());
}

function main(argv: string[]): void {
  const [command] = argv;
  switch (command) {
    case 'version':
    case 'v':
      process.stdout.write(`slivingdoc ${pkg.version}\n`);
      return;
    case 'serve':
    case 's':
      serve();
      return;
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(
        `slivingdoc: usage — unknown command ${JSON.stringify(command ?? '')}\n`,
      );
      process.exitCode = 2;
  }
}

main(process.argv.slice(2));
