// The git baseline (issue scenario 6): a bare repository on local disk, one clone per writer,
// commit then push, and on rejection `pull --rebase` and push again. Benchmarks may run git;
// product code never does.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Outcome, timed, type Writer, type WriterPool } from './types';

const run = promisify(execFile);

/** Settings that keep git from doing unrelated work (gc, hooks, signing) during a run. */
const GIT_CONFIG = [
  '-c',
  'user.name=bench',
  '-c',
  'user.email=bench@localhost',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'init.defaultBranch=main',
];

/** Environment that isolates git from the user's and the system's configuration. */
function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}

export async function git(cwd: string, home: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', [...GIT_CONFIG, ...args], {
    cwd,
    env: gitEnv(home),
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

async function succeeds(cwd: string, home: string, args: string[]): Promise<boolean> {
  try {
    await git(cwd, home, args);
    return true;
  } catch {
    return false;
  }
}

class GitWriter implements Writer {
  constructor(
    readonly dir: string,
    private readonly home: string,
    private readonly retries: number,
    private readonly countPush: () => void,
  ) {}

  async pull(): Promise<Outcome> {
    const { value, ms } = await timed(() =>
      succeeds(this.dir, this.home, ['pull', '-q', '--rebase', 'origin', 'main']),
    );
    return value ? { code: 'OK', ms } : { code: 'GIT_FAILED', reason: 'PULL', ms };
  }

  /** Commits everything in the clone, then pushes, rebasing on every rejection up to the bound. */
  async commit(message: string): Promise<Outcome> {
    const { value, ms } = await timed(async (): Promise<Omit<Outcome, 'ms'>> => {
      await git(this.dir, this.home, ['add', '-A']);
      if (!(await succeeds(this.dir, this.home, ['commit', '-q', '-m', message]))) {
        return { code: 'GIT_FAILED', reason: 'COMMIT' };
      }
      for (let attempt = 0; attempt <= this.retries; attempt++) {
        this.countPush();
        if (await succeeds(this.dir, this.home, ['push', '-q', 'origin', 'HEAD:main'])) {
          return { code: 'OK' };
        }
        if (attempt === this.retries) break;
        if (!(await succeeds(this.dir, this.home, ['pull', '-q', '--rebase', 'origin', 'main']))) {
          return { code: 'GIT_FAILED', reason: 'REBASE' };
        }
      }
      return { code: 'REMOTE_BUSY', reason: 'RETRIES_EXHAUSTED' };
    });
    return { ...value, ms };
  }

  async close(): Promise<void> {}
}

/**
 * Creates a bare repository with one initial commit under `root` and `count` clones of it.
 * `retries` matches slivingdoc's `--commit-retries` so both sides get the same bound.
 */
export async function createGitPool(opts: {
  root: string;
  count: number;
  retries: number;
}): Promise<WriterPool> {
  const home = join(opts.root, 'home');
  const origin = join(opts.root, 'origin.git');
  await mkdir(home, { recursive: true });
  await git(opts.root, home, ['init', '-q', '--bare', origin]);
  const seed = join(opts.root, 'seed');
  await git(opts.root, home, ['clone', '-q', origin, seed]);
  await writeFile(join(seed, 'README.md'), 'shared notebook\n');
  await git(seed, home, ['add', '-A']);
  await git(seed, home, ['commit', '-q', '-m', 'seed']);
  await git(seed, home, ['push', '-q', 'origin', 'HEAD:main']);
  let pushes = 0;
  const writers: Writer[] = [];
  for (let i = 0; i < opts.count; i++) {
    const dir = join(opts.root, `w${i}`);
    await git(opts.root, home, ['clone', '-q', '-b', 'main', origin, dir]);
    writers.push(new GitWriter(dir, home, opts.retries, () => pushes++));
  }
  return { writers, casAttempts: async () => pushes, close: async () => {} };
}
