/**
 * The AWS SDK loads only when a bucket is configured, so an embedded `serve` starts
 * without it. An idle embedded `serve` after a pull holds neither the MCP SDK's
 * runtime (zod, ajv) nor isomorphic-git, which only reading an object back from disk needs. Each built server runs under a module log (helpers/module-log: Node's resolve
 * hook records every ESM module the process resolves) and answers a real pull; the S3 case is
 * the control showing the log does see the SDK when it is loaded. (Node 20's hook sees
 * `import`, not `require`: the bundle is ESM and reaches its externals through imports, except momoa, which
 * the duplicate-key check requires on the first tools/call.)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { providedS3 } from '@slivingdoc/testkit/s3-env';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, sandboxEnv } from './helpers/bin';
import { McpServerProcess } from './helpers/mcp-server';
import { moduleLogOfServe } from './helpers/module-log/serve';

beforeAll(assertBuilt);

/**
 * The packages (by name) a `serve` with `extra` in its environment (and `args`) resolved up to
 * its first pull.
 */
async function packagesOfServe(
  extra: NodeJS.ProcessEnv,
  args: string[] = [],
  env: NodeJS.ProcessEnv = sandboxEnv(extra),
): Promise<string[]> {
  const urls = await moduleLogOfServe(env, args);
  // Only this process's own modules count: the log also holds the hooks and the bin itself.
  expect(urls.some((url) => url.endsWith('/dist/cli.js'))).toBe(true);
  const packages = urls.flatMap(
    (url) => /.*\/node_modules\/((?:@[^/]+\/)?[^/@][^/]*)\//.exec(url)?.[1] ?? [],
  );
  return [...new Set(packages)].sort();
}

async function sdkModulesOfServe(extra: NodeJS.ProcessEnv): Promise<string[]> {
  return (await packagesOfServe(extra)).filter((name) => name.startsWith('@aws-sdk/'));
}

describe('an idle embedded serve holds only what its first pull needed', () => {
  it('resolves neither the MCP SDK, zod, ajv nor isomorphic-git up to its first pull', async () => {
    const packages = await packagesOfServe({});
    // Control: the log sees the third-party packages the server does load.
    expect(packages).toEqual(expect.arrayContaining(['pino']));
    for (const heavy of ['@modelcontextprotocol/sdk', 'zod', 'ajv', 'isomorphic-git'])
      expect(packages).not.toContain(heavy);
  });

  it('a restart over an existing private root reads its objects back without isomorphic-git', async () => {
    const env = sandboxEnv();
    const roots = [
      '--workspace-root',
      join(env.HOME!, 'ws'),
      '--private-root',
      join(env.HOME!, 'p'),
    ];
    mkdirSync(join(env.HOME!, 'ws'));
    const first = await McpServerProcess.start(roots, env);
    try {
      expect((await first.call('notes_pull', {})).structured.code).toBe('OK');
      writeFileSync(join(first.notebookDir, 'note.md'), 'kept\n');
      expect((await first.call('notes_commit', { message: 'm' })).structured.code).toBe('OK');
    } finally {
      await first.close();
    }
    // The second server's pull reads the baseline commit and tree from the private root.
    expect(await packagesOfServe({}, roots, env)).not.toContain('isomorphic-git');
    expect(readFileSync(join(env.HOME!, 'ws', 'note.md'), 'utf8')).toBe('kept\n');
  });
});

describe('the AWS SDK is loaded only when a bucket is configured', () => {
  it('an embedded serve answers a pull without resolving any @aws-sdk module', async () => {
    expect(await sdkModulesOfServe({})).toEqual([]);
  });

  it('control: a serve on the real S3 server resolves the S3 client and its upload helper', async () => {
    const s3 = providedS3(inject('s3'));
    const modules = await sdkModulesOfServe({
      SLIVINGDOC_BUCKET: s3.bucket,
      SLIVINGDOC_PREFIX: `lazy-sdk-${process.pid}-${Date.now()}`,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
    expect(modules).toEqual(expect.arrayContaining(['@aws-sdk/client-s3', '@aws-sdk/lib-storage']));
  });
});
