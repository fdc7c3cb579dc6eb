// The web view's figures, run by `pnpm bench` after the other scenarios:
// - /history of a notebook with 1,000 publications: answered (server time to the whole page)
//   and painted in Chromium (first contentful paint after navigation);
// - blame of a 1,000-line file changed by each of the 1,000 publications;
// - a new publication visible in an open page: from the commit's OK to the row on screen.
// Embedded store; writes through the in-process engine, the view is the built bin. Prints a
// table and writes bench-results/view.json. Chromium is Debian's (tooling/browser/install-chromium.sh);
// without it the browser figures are left out and say so.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createEmbeddedStore, createNotebookService } from '@slivingdoc/engine';

const repoRoot = resolve(import.meta.dirname, '../..');
const bin = join(repoRoot, 'apps/slivingdoc/dist/cli.js');
const CHROMIUM = '/usr/bin/chromium';
// Quick mode as the other scenarios read it (tooling/bench/config.ts).
const QUICK =
  process.argv.includes('--quick') ||
  (!!process.env.BENCH_QUICK && process.env.BENCH_QUICK !== '0');
const PUBLICATIONS = Number(process.env.BENCH_VIEW_PUBLICATIONS ?? (QUICK ? 100 : 1000));
const LINES = 1000;

function progress(text: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'slivingdoc-bench-view-'));
  const storeDir = join(root, 'store');
  const writerRoot = join(root, 'writer');
  await mkdir(writerRoot, { recursive: true });
  const store = await createEmbeddedStore({ dir: storeDir, prefix: 'view' });
  const writer = await createNotebookService({
    store,
    privateRoot: join(root, 'private'),
    workspaceRoot: writerRoot,
    notebookDir: join(writerRoot, 'notebook'),
  });
  const dir = writer.notebookDir;
  const lines = Array.from({ length: LINES }, (_, i) => `line ${i + 1}`);
  progress(`view: seeding ${PUBLICATIONS} publications of a ${LINES}-line file`);
  await writer.pull({});
  for (let n = 1; n <= PUBLICATIONS; n += 1) {
    // Each publication rewrites one line (spread over the file) and adds a small note.
    lines[(n * 7) % LINES] =
      `line ${((n * 7) % LINES) + 1} edited by ${n % 3 === 0 ? 'carol' : n % 2 === 0 ? 'bob' : 'alice'} at ${n}`;
    await writeFile(join(dir, 'big.md'), `${lines.join('\n')}\n`);
    await writeFile(join(dir, `note-${n % 50}.md`), `note ${n}\n`);
    await writer.commit({
      message: `publication ${n}\n\nbody of ${n}`,
      actor: ['alice', 'bob', 'carol'][n % 3] as string,
    });
  }

  progress('view: starting slivingdoc view');
  const view = spawn(
    process.execPath,
    [
      bin,
      'view',
      '--listen',
      '127.0.0.1:0',
      '--store-dir',
      storeDir,
      '--prefix',
      'view',
      '--actor',
      'bench',
    ],
    {
      env: {
        ...process.env,
        HOME: root,
        XDG_CONFIG_HOME: join(root, 'config'),
        XDG_CACHE_HOME: join(root, 'cache'),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const login = await firstLine(view);
  const origin = new URL(login).origin;
  const cookie = await sessionCookie(login);
  const timed = async (path: string) => {
    const start = performance.now();
    const response = await fetch(`${origin}${path}`, { headers: { cookie } });
    await response.text();
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    return performance.now() - start;
  };
  const figures: Record<string, number | string> = { publications: PUBLICATIONS, fileLines: LINES };
  try {
    progress('view: /history and blame over HTTP');
    const historyCold = await timed('/history');
    const historyRuns: number[] = [];
    for (let i = 0; i < 7; i += 1) historyRuns.push(await timed('/history'));
    const history = median(historyRuns);
    const lastPage = await timed(`/history?page=${Math.ceil(PUBLICATIONS / 50)}`);
    const filtered = await timed('/history?actor=bob&path=big.md');
    const blameCold = await timed('/blame/big.md');
    const blameRuns: number[] = [];
    for (let i = 0; i < 3; i += 1) blameRuns.push(await timed('/blame/big.md'));
    // The first page as a browser loads it: the HTML of / and its two assets, gzip-compressed.
    let firstPageGzipBytes = 0;
    for (const path of ['/', '/assets/view.js', '/assets/view.css']) {
      const body = await (await fetch(`${origin}${path}`, { headers: { cookie } })).arrayBuffer();
      firstPageGzipBytes += gzipSync(Buffer.from(body)).byteLength;
    }
    Object.assign(figures, {
      firstPageGzipBytes,
      historyFirstMs: round(historyCold),
      historyMedianMs: round(history),
      historyLastPageMs: round(lastPage),
      historyFilteredMs: round(filtered),
      blameFirstMs: round(blameCold),
      blameMedianMs: round(median(blameRuns)),
    });
    if (existsSync(CHROMIUM))
      Object.assign(figures, await browserFigures(origin, login, writer, dir));
    else
      figures.browser = `skipped: ${CHROMIUM} missing (bash tooling/browser/install-chromium.sh)`;
  } finally {
    view.kill('SIGTERM');
    await writer.close();
  }
  const targets = [
    ['/history answered (median, ms)', figures.historyMedianMs, 300],
    ['/history painted in Chromium (ms)', figures.historyPaintMs, 1000],
    ['blame of the file (median, ms)', figures.blameMedianMs, 1000],
    ['new publication visible after OK (max, ms)', figures.liveMaxMs, 3000],
    ['first page, gzip (bytes)', figures.firstPageGzipBytes, 200 * 1024],
  ] as const;
  const rows = targets.map(
    ([what, value, limit]) =>
      `| ${what} | ${value ?? 'n/a'} | ≤ ${limit} | ${typeof value === 'number' ? (value <= limit ? 'met' : 'NOT MET') : 'n/a'} |`,
  );
  process.stdout.write(
    `\nView: ${PUBLICATIONS} publications, a ${LINES}-line file\n\n| figure | value | target | |\n| --- | --- | --- | --- |\n${rows.join('\n')}\n\n${JSON.stringify(figures)}\n`,
  );
  const out = process.env.BENCH_OUT ?? join(repoRoot, 'bench-results');
  await mkdir(out, { recursive: true });
  await writeFile(
    join(out, 'view.json'),
    `${JSON.stringify({ date: new Date().toISOString(), figures }, null, 2)}\n`,
  );
}

function round(ms: number): number {
  return Math.round(ms);
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolveLine, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolveLine(out.split('\n')[0] as string);
    });
    child.once('exit', (code) => reject(new Error(`view exited with ${code}`)));
  });
}

async function sessionCookie(login: string): Promise<string> {
  const response = await fetch(login, { redirect: 'manual' });
  const set = response.headers.get('set-cookie') ?? '';
  return set.split(';')[0] as string;
}

/** Paint time of /history, and how long a new publication takes to show in an open page. */
async function browserFigures(
  origin: string,
  login: string,
  writer: Awaited<ReturnType<typeof createNotebookService>>,
  dir: string,
): Promise<Record<string, number>> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage();
    await page.goto(login);
    progress('view: paint of /history in Chromium');
    const paints: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      await page.goto(`${origin}/history`, { waitUntil: 'load' });
      // First contentful paint from the navigation's start; if the browser records none
      // (headless without a compositor frame yet), the first frame after load instead.
      paints.push(
        await page.evaluate(
          () =>
            new Promise<number>((done) => {
              new PerformanceObserver((list) => {
                const entry = list.getEntriesByName('first-contentful-paint')[0];
                if (entry !== undefined) done(entry.startTime);
                // 'paint' is a browser entry type Node's typings do not list.
              }).observe({ type: 'paint' as never, buffered: true });
              const frame = (
                globalThis as unknown as { requestAnimationFrame(f: () => void): void }
              ).requestAnimationFrame;
              setTimeout(() => frame(() => done(performance.now())), 2000);
            }),
        ),
      );
    }
    progress('view: live updates');
    const delays: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const subject = `live ${i} ${Date.now()}`;
      await writeFile(join(dir, 'live.md'), `${subject}\n`);
      await writer.commit({ message: subject, actor: 'bench' });
      const ok = performance.now();
      await page
        .locator('table.history tbody tr td:nth-child(4)', { hasText: subject })
        .waitFor({ timeout: 30_000 });
      delays.push(performance.now() - ok);
    }
    return {
      historyPaintMs: round(median(paints)),
      liveMedianMs: round(median(delays)),
      liveMaxMs: round(Math.max(...delays)),
    };
  } finally {
    await browser.close();
  }
}

await main();
