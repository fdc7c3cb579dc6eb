import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, LockTimeoutError } from '../src/index';
import { lockAddress, lockDirectory } from '../src/lock';
import { OWNER, takeOver } from '../src/lock-takeover';
import { openPrivateState } from '../src/private-state';

// Lock and gate sockets live in a per-user 0700 directory: no other local
// user can squat or reach them, a stale socket file left by SIGKILL is taken over, and two
// waiters that both find it stale never both hold the lock.

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const NOBODY = 65534;
let runtime: string;
const savedLockDir = process.env.SLIVINGDOC_LOCK_DIR;
const savedTmpdir = process.env.TMPDIR;
const children: ChildProcess[] = [];

beforeEach(async () => {
  // A lock directory of its own per test, inside a parent traversable by others (0755), so
  // the lock directory's own 0700 is the only thing that keeps another user out.
  runtime = await mkdtemp(join(tmpdir(), 'ws-lockdir-'));
  await chmod(runtime, 0o755);
  process.env.SLIVINGDOC_LOCK_DIR = join(runtime, 'slivingdoc');
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  if (savedLockDir === undefined) delete process.env.SLIVINGDOC_LOCK_DIR;
  else process.env.SLIVINGDOC_LOCK_DIR = savedLockDir;
  await rm(runtime, { recursive: true, force: true });
});

function requireRoot(): void {
  // Fails loudly instead of skipping: the test command runs as root.
  if (process.getuid?.() !== 0)
    throw new Error('this test runs a child as another user: run as root');
}

/** Runs a TypeScript fixture of this package in a child process; resolves with its stdout. */
function fixture(name: string, args: string[]): { child: ChildProcess; output: Promise<string> } {
  const child = spawn(
    process.execPath,
    ['--conditions=@slivingdoc/source', '--import', 'tsx', join(fixtures, name), ...args],
    { cwd: packageDir, stdio: ['ignore', 'pipe', 'inherit'], env: process.env },
  );
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    out += chunk;
  });
  const output = once(child, 'exit').then(() => out);
  return { child, output };
}

/** Leaves a stale socket file at `path`: a child binds it and is killed with SIGKILL. */
async function staleSocketAt(path: string): Promise<void> {
  await mkdir(lockDirectory(), { recursive: true, mode: 0o700 });
  const bindAndWait = `require('node:net').createServer().listen(process.argv[1], () =>
    process.stdout.write('bound\\n')); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', bindAndWait, path], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await once(child.stdout!, 'data');
  child.kill('SIGKILL');
  await once(child, 'exit');
  expect((await lstat(path)).isSocket()).toBe(true);
}

describe('the per-user lock directory', () => {
  it('is created 0700, owned by this user, and holds every lock socket', async () => {
    const release = await acquireLock('dir-test', { timeoutMs: 1_000 });
    const dir = await lstat(lockDirectory());
    expect(lockDirectory()).toBe(join(runtime, 'slivingdoc'));
    expect(dir.isDirectory()).toBe(true);
    expect(dir.mode & 0o777).toBe(0o700);
    expect(dir.uid).toBe(process.getuid?.());
    const address = lockAddress('dir-test');
    expect(address.startsWith(`${lockDirectory()}/`)).toBe(true);
    expect(Buffer.byteLength(address)).toBeLessThanOrEqual(107);
    expect((await lstat(address)).isSocket()).toBe(true);
    await release();
    // A holder that releases removes its own socket file.
    await expect(lstat(address)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is /tmp/slivingdoc-<uid> whatever TMPDIR and XDG_RUNTIME_DIR say', () => {
    const fixed = `/tmp/slivingdoc-${process.getuid?.()}`;
    expect(lockDirectory({})).toBe(fixed);
    expect(lockDirectory({ TMPDIR: '/var/other', XDG_RUNTIME_DIR: '/run/user/7' })).toBe(fixed);
    // Only an absolute SLIVINGDOC_LOCK_DIR moves it.
    expect(lockDirectory({ SLIVINGDOC_LOCK_DIR: 'relative/dir' })).toBe(fixed);
    expect(lockDirectory({ SLIVINGDOC_LOCK_DIR: '/srv/locks' })).toBe('/srv/locks');
  });

  it('processes given different TMPDIR and XDG_RUNTIME_DIR exclude each other', async () => {
    // An MCP host, a terminal and a cron job hand their children different environments; the
    // lock of one P must still be one lock. Both children use the default directory.
    const base = await mkdtemp(join(tmpdir(), 'ws-lockenv-'));
    const [privateRoot, notebook] = [join(base, 'private'), join(base, 'notebook')];
    await mkdir(notebook);
    // Both directories exist, so processes that followed XDG_RUNTIME_DIR or TMPDIR would start
    // and lock, each in its own place.
    await mkdir(join(base, 'run'));
    await mkdir(join(base, 'other'));
    const { SLIVINGDOC_LOCK_DIR: _, ...inherited } = process.env;
    const holder = spawn(
      process.execPath,
      [
        '--conditions=@slivingdoc/source',
        '--import',
        'tsx',
        join(fixtures, 'hold-lock.ts'),
        privateRoot,
        notebook,
      ],
      {
        cwd: packageDir,
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...inherited, TMPDIR: base, XDG_RUNTIME_DIR: join(base, 'run') },
      },
    );
    children.push(holder);
    try {
      await once(holder.stdout!, 'data');
      delete process.env.SLIVINGDOC_LOCK_DIR;
      process.env.TMPDIR = join(base, 'other');
      const state = await openPrivateState({
        privateRoot,
        notebookDir: notebook,
        storageIdentity: 'test-store',
      });
      await expect(state.lock({ timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
      holder.kill('SIGKILL');
      await once(holder, 'exit');
      await (await state.lock({ timeoutMs: 5_000 }))();
    } finally {
      process.env.TMPDIR = savedTmpdir;
      if (savedTmpdir === undefined) delete process.env.TMPDIR;
      await rm(base, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a lock directory owned by another user or replaced by a symlink', async () => {
    requireRoot();
    await mkdir(lockDirectory(), { mode: 0o700 });
    await chown(lockDirectory(), NOBODY, NOBODY);
    await expect(acquireLock('owned-by-nobody', { timeoutMs: 500 })).rejects.toMatchObject({
      code: 'EACCES',
      message: 'the lock directory belongs to another user',
    });

    await mkdir(join(runtime, 'second'));
    process.env.SLIVINGDOC_LOCK_DIR = join(runtime, 'second', 'slivingdoc');
    const target = join(runtime, 'elsewhere');
    await mkdir(target, { mode: 0o700 });
    await symlink(target, lockDirectory());
    await expect(acquireLock('symlinked', { timeoutMs: 500 })).rejects.toMatchObject({
      code: 'EACCES',
      message: 'the lock directory is a symbolic link',
    });
  });

  it('narrows a wider lock directory of our own to 0700', async () => {
    await mkdir(lockDirectory());
    await chmod(lockDirectory(), 0o777);
    await (await acquireLock('narrowed', { timeoutMs: 500 }))();
    expect((await lstat(lockDirectory())).mode & 0o777).toBe(0o700);
  });

  it('another user can neither bind, connect nor squat a lock name', async () => {
    requireRoot();
    const release = await acquireLock('squat-test', { timeoutMs: 1_000 });
    const open = join(runtime, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    // The old abstract name of this lock: any user could bind it and make us wait 30 s.
    const abstractHash = createHash('sha256').update('squat-free').digest('hex');
    const script = `
      const net = require('node:net');
      const [held, free, control, hash] = process.argv.slice(1);
      const abstract = '\\0slivingdoc-lock-' + hash;
      const attempt = (fn) => new Promise((done) => {
        const s = fn();
        s.once('error', (e) => done(e.code));
        s.once(s instanceof net.Server ? 'listening' : 'connect', () => done('ok'));
      });
      (async () => {
        const results = [
          await attempt(() => net.connect(held)),
          await attempt(() => net.createServer().listen(free)),
          await attempt(() => net.createServer().listen(control)),
          await attempt(() => net.createServer().listen(abstract)),
        ];
        process.stdout.write(results.join(' ') + '\\n');
        setInterval(() => {}, 1000);
      })();`;
    const child = spawn(
      'setpriv',
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        process.execPath,
        '-e',
        script,
        lockAddress('squat-test'),
        lockAddress('squat-free'),
        join(open, 'control.sock'),
        abstractHash,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    // Connect and bind in our directory are refused; the control bind elsewhere works, so the
    // refusals are the directory's doing; the squatted abstract name binds but blocks nothing.
    expect(line.toString()).toBe('EACCES EACCES ok ok\n');
    await release();
    await (await acquireLock('squat-free', { timeoutMs: 1_000 }))();
  }, 60_000);
});

describe('stale socket files', () => {
  it('a holder killed with SIGKILL leaves a socket file that the next taker replaces', async () => {
    await staleSocketAt(lockAddress('stale-test'));
    const release = await acquireLock('stale-test', { timeoutMs: 2_000 });
    expect((await lstat(lockAddress('stale-test'))).isSocket()).toBe(true);
    await release();
  }, 60_000);

  it('concurrent takeovers in one process: exactly one binds', async () => {
    const path = lockAddress('in-process-race');
    await staleSocketAt(path);
    const servers: Server[] = [];
    const bind = () =>
      new Promise<Server | undefined>((resolve) => {
        const server = createServer();
        server.once('error', () => resolve(undefined));
        server.listen(path, () => {
          servers.push(server);
          resolve(server);
        });
      });
    const results = await Promise.all(Array.from({ length: 8 }, () => takeOver(path, bind)));
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  }, 60_000);

  it('racing takeovers across processes never both hold the lock', async () => {
    const key = 'cross-process-race';
    const marker = join(runtime, 'inside');
    for (let round = 0; round < 2; round += 1) {
      await staleSocketAt(lockAddress(key));
      const start = join(runtime, `start-${round}`);
      const racers = Array.from({ length: 5 }, () => fixture('race-lock.ts', [key, marker, start]));
      // Every racer is running and polling for the start file before it appears.
      await Promise.all(racers.map((r) => once(r.child.stdout!, 'data')));
      await writeFile(start, '');
      const outputs = await Promise.all(racers.map((r) => r.output));
      expect(outputs).toEqual(Array.from({ length: 5 }, () => 'ready\nheld\n'));
    }
  }, 180_000);

  it('a takeover mutex left by a killed taker does not block; a live one does', async () => {
    const key = 'mutex-test';
    const path = lockAddress(key);
    await staleSocketAt(path);
    const { ino } = await lstat(path, { bigint: true });
    // A taker that died mid-takeover: pid 1's start time never matches this fake one.
    await symlink('1:0', `${path}.take-${ino}.1`);
    await (await acquireLock(key, { timeoutMs: 2_000 }))();

    await staleSocketAt(path);
    const again = (await lstat(path, { bigint: true })).ino;
    // A live taker (this very process) holds the mutex: nobody else removes the file. The new
    // stale socket may reuse the first one's inode, whose dead mutex may still be there.
    await rm(`${path}.take-${again}.1`, { force: true });
    await symlink(OWNER, `${path}.take-${again}.1`);
    await expect(acquireLock(key, { timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
    await unlink(`${path}.take-${again}.1`);
    await (await acquireLock(key, { timeoutMs: 2_000 }))();
  }, 60_000);
});
