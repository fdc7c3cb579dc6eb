// `pnpm bench` in apps/slivingdoc: start-up figures of the built bin (build it first).
//   - `slivingdoc version` wall time
//   - bare `node -e 0` wall time, in the same run (the floor every figure sits on)
//   - embedded `serve`: spawn → initialize response, spawn → first completed notes_pull on an
//     empty notebook, the server's CPU time at both points (/proc/<pid>/stat), resident memory
//     (VmRSS) right after initialize, after that pull, and idle BENCH_IDLE_MS (default 5000)
//     later, with the part of it no other process shares (smaps_rollup Private_Dirty)
//   - one burst: BENCH_BURST_WRITERS (default 100) writers, each its own notebook directory
//     under one server, pull then commit all at once; the server's peak resident memory
//     (VmHWM) and the outcomes
// Raw newline-delimited JSON-RPC over the child's stdio, so client overhead is not counted.
// Each serve run gets fresh HOME/XDG/TMPDIR directories (an empty embedded store).
// BENCH_NODE_FLAGS='--max-semi-space-size=1' starts the serve children with those flags.
// BENCH_BINS=<cli.js>,<cli.js> compares builds side by side (e.g. a worktree of an older
// commit): runs alternate between them, so machine load hits every build alike.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bins = (process.env.BENCH_BINS ?? join(import.meta.dirname, '../dist/cli.js')).split(',');
for (const bin of bins) {
  if (!existsSync(bin))
    throw new Error(`${bin} is missing: build it (pnpm --filter slivingdoc build)`);
}
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
// How long a server sits idle after its first pull before its resident memory is read again.
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);
// Node/V8 flags for the serve children only (e.g. `--max-semi-space-size=1`), to compare.
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const CLOCK_TICKS = Number(
  spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100,
);

function sandbox() {
  const home = mkdtempSync(join(tmpdir(), 'slivingdoc-bench-'));
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: home,
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
  };
}

function bareNodeMs() {
  const start = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '0']);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function versionMs(bin) {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [bin, 'version'], { env: sandbox(), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`version failed: ${run.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** CPU time (user + system) the process has used so far: steadier than wall time on a busy machine. */
function cpuMs(pid) {
  // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function rssMiB(pid, field = 'VmRSS') {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)[1]) / 1024;
}

/**
 * Memory only this process holds (smaps_rollup Private_Dirty: its heap and allocations, not
 * the node binary's pages, which every server on the machine shares).
 */
function privateMiB(pid) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/Private_Dirty:\s+(\d+) kB/.exec(rollup)[1]) / 1024;
}

/** A `serve` child spoken to in raw JSON-RPC. */
function startServe(bin, env = sandbox(), args = []) {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, [...NODE_FLAGS, bin, 'serve', ...args], { env });
  child.stderr.resume(); // drained: the server logs synchronously
  const waiting = new Map();
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      const message = JSON.parse(line);
      waiting.get(message.id)?.(message);
    }
  });
  const request = (id, method, params) =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const elapsed = () => Number(process.hrtime.bigint() - start) / 1e6;
  return { child, request, elapsed };
}

async function serveRun(bin) {
  const { child, request, elapsed } = startServe(bin);
  await request(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '0' },
  });
  const initializeMs = elapsed();
  const rss = rssMiB(child.pid);
  const initializeCpuMs = cpuMs(child.pid);
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const pull = await request(2, 'tools/call', { name: 'notes_pull', arguments: {} });
  if (pull.result?.structuredContent?.code !== 'OK') throw new Error(JSON.stringify(pull));
  const firstPullMs = elapsed();
  const rssAfterPull = rssMiB(child.pid);
  const firstPullCpuMs = cpuMs(child.pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const rssIdle = rssMiB(child.pid);
  const privateIdle = privateMiB(child.pid);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.stdin.end();
  await exited;
  return {
    initializeMs,
    firstPullMs,
    rss,
    rssAfterPull,
    rssIdle,
    privateIdle,
    initializeCpuMs,
    firstPullCpuMs,
  };
}

/** The burst: every writer pulls its own directory, edits it, then all commit at once. */
async function burstRun(bin, writers) {
  const env = sandbox();
  const workspace = join(env.HOME, 'ws');
  mkdirSync(workspace);
  const { child, request } = startServe(bin, env, ['--workspace-root', workspace]);
  let id = 1;
  const call = (name, args) =>
    request(++id, 'tools/call', { name, arguments: args }).then(
      (m) => m.result?.structuredContent?.code ?? `error ${m.error?.code}`,
    );
  await request(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '0' },
  });
  const dirs = Array.from({ length: writers }, (_, i) => join(workspace, `w${i}`));
  const pulls = await Promise.all(dirs.map((path) => call('notes_pull', { path })));
  if (pulls.some((code) => code !== 'OK')) throw new Error(`pulls: ${pulls.join(' ')}`);
  for (const [i, dir] of dirs.entries()) writeFileSync(join(dir, `note-${i}.md`), `writer ${i}\n`);
  const rssBefore = rssMiB(child.pid);
  const outcomes = await Promise.all(
    dirs.map((path, i) => call('notes_commit', { path, message: `writer ${i}` })),
  );
  const peak = rssMiB(child.pid, 'VmHWM');
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.stdin.end();
  await exited;
  const counts = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return { rssBefore, peak, counts };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const row = (name, unit, xs) => ({
  name,
  unit,
  median: median(xs),
  min: Math.min(...xs),
  max: Math.max(...xs),
});

const version = bins.map(() => []);
const serves = bins.map(() => []);
const bare = [];
for (let i = 0; i < RUNS; i++) {
  bare.push(bareNodeMs());
  for (const [b, bin] of bins.entries()) version[b].push(versionMs(bin));
}
for (let i = 0; i < RUNS; i++) {
  for (const [b, bin] of bins.entries()) serves[b].push(await serveRun(bin));
}

const BURST = Number(process.env.BENCH_BURST_WRITERS ?? 100);
const bursts = [];
for (const bin of bins) bursts.push(BURST > 0 ? await burstRun(bin, BURST) : undefined);

const rowsOf = (b) => [
  row('bare node -e 0 (wall, same run)', 'ms', bare),
  row('slivingdoc version (wall)', 'ms', version[b]),
  row(
    'serve: spawn → initialize response',
    'ms',
    serves[b].map((r) => r.initializeMs),
  ),
  row(
    'serve: spawn → first notes_pull (empty embedded)',
    'ms',
    serves[b].map((r) => r.firstPullMs),
  ),
  row(
    'serve: CPU time (user+sys) up to initialize',
    'ms',
    serves[b].map((r) => r.initializeCpuMs),
  ),
  row(
    'serve: CPU time (user+sys) up to first notes_pull',
    'ms',
    serves[b].map((r) => r.firstPullCpuMs),
  ),
  row(
    'serve: resident memory after initialize',
    'MiB',
    serves[b].map((r) => r.rss),
  ),
  row(
    'serve: resident memory after the first notes_pull',
    'MiB',
    serves[b].map((r) => r.rssAfterPull),
  ),
  row(
    `serve: resident memory idle, ${IDLE_MS / 1000} s after that pull`,
    'MiB',
    serves[b].map((r) => r.rssIdle),
  ),
  row(
    'serve: private memory idle (Private_Dirty)',
    'MiB',
    serves[b].map((r) => r.privateIdle),
  ),
];
const fmt = (x) => x.toFixed(1).padStart(8);
console.log(`slivingdoc start-up (${RUNS} runs each, Node ${process.version})`);
for (const [b, bin] of bins.entries()) {
  if (bins.length > 1) console.log(`\n${bin}`);
  console.log(
    `${'measure'.padEnd(50)} ${'unit'.padEnd(4)} ${'median'.padStart(8)} ${'min'.padStart(8)} ${'max'.padStart(8)}`,
  );
  for (const r of rowsOf(b)) {
    console.log(
      `${r.name.padEnd(50)} ${r.unit.padEnd(4)} ${fmt(r.median)} ${fmt(r.min)} ${fmt(r.max)}`,
    );
  }
  const burst = bursts[b];
  if (burst) {
    console.log(
      `burst of ${BURST} writers (one server): resident ${burst.rssBefore.toFixed(1)} MiB before the commits, peak (VmHWM) ${burst.peak.toFixed(1)} MiB; outcomes ${JSON.stringify(burst.counts)}`,
    );
  }
}
