import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the S3 suites read to reach the real server (docs/development.md). */
export interface S3TestEnv {
  SLIVINGDOC_TEST_S3_ENDPOINT: string;
  SLIVINGDOC_TEST_S3_ACCESS_KEY: string;
  SLIVINGDOC_TEST_S3_SECRET_KEY: string;
  SLIVINGDOC_TEST_S3_BUCKET: string;
  /**
   * The Ceph conf of a cluster `tooling/rgw/start-rgw.sh` started, for `radosgw-admin` (tests
   * that create users); absent for a server named from elsewhere.
   */
  SLIVINGDOC_TEST_RGW_CEPH_CONF?: string;
}

/** A running S3 server: its environment, and how to stop it (a no-op when it was reused). */
export interface RunningS3 {
  env: S3TestEnv;
  /** True when this process started the server (and `stop` will remove it). */
  owned: boolean;
  stop(): Promise<void>;
}

// The shell scripts stay in tooling/rgw: test-all.sh and bench-all.sh run them directly.
const defaultScriptsDir = join(dirname(fileURLToPath(import.meta.url)), '../../../tooling/rgw');
const ENV_NAMES = [
  'SLIVINGDOC_TEST_S3_ENDPOINT',
  'SLIVINGDOC_TEST_S3_ACCESS_KEY',
  'SLIVINGDOC_TEST_S3_SECRET_KEY',
  'SLIVINGDOC_TEST_S3_BUCKET',
] as const;

/** The server named by the environment, when `SLIVINGDOC_TEST_S3_ENDPOINT` is set. */
export function s3EnvFrom(env: Record<string, string | undefined>): S3TestEnv | undefined {
  if (!env.SLIVINGDOC_TEST_S3_ENDPOINT) return undefined;
  const missing = ENV_NAMES.filter((name) => !env[name]);
  if (missing.length > 0)
    throw new Error(`S3 test environment incomplete: ${missing.join(', ')} unset`);
  const required = Object.fromEntries(ENV_NAMES.map((name) => [name, env[name]!]));
  const cephConf = env.SLIVINGDOC_TEST_RGW_CEPH_CONF;
  return {
    ...required,
    ...(cephConf ? { SLIVINGDOC_TEST_RGW_CEPH_CONF: cephConf } : {}),
  } as unknown as S3TestEnv;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function run(
  scriptsDir: string,
  script: string,
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(scriptsDir, script), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${script} exited with ${code}:\n${stderr.slice(-4000)}`));
    });
  });
}

/**
 * Reuses the server named by `SLIVINGDOC_TEST_S3_*` when set; otherwise installs Ceph's RADOS
 * Gateway if missing and starts a private throwaway instance on free loopback ports under its
 * own directory in the OS temp dir, so it never collides with another instance. Throws when the
 * server cannot start: tests that need it must fail, never skip.
 */
export async function ensureS3Server(
  env: NodeJS.ProcessEnv = process.env,
  /** Where the rgw scripts live (pass it when this module is bundled elsewhere). */
  scriptsDir: string = defaultScriptsDir,
): Promise<RunningS3> {
  const reused = s3EnvFrom(env);
  if (reused) return { env: reused, owned: false, stop: async () => undefined };
  await run(scriptsDir, 'install-rgw.sh', env);
  const dir = await mkdtemp(join(tmpdir(), 'slivingdoc-rgw-'));
  const ownEnv = {
    ...env,
    RGW_DIR: dir,
    RGW_PORT: String(await freePort()),
    RGW_MON_PORT: String(await freePort()),
  };
  const stop = async (): Promise<void> => {
    await run(scriptsDir, 'stop-rgw.sh', ownEnv, ['--wipe']).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const output = await run(scriptsDir, 'start-rgw.sh', ownEnv);
    const last = output.trim().split('\n').at(-1) ?? '';
    const pairs = Object.fromEntries(
      last
        .split(' ')
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    const started = s3EnvFrom(pairs);
    if (!started) throw new Error('start-rgw.sh printed no SLIVINGDOC_TEST_S3_* line');
    return { env: started, owned: true, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
