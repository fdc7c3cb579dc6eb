// Summarises V8 .cpuprofile files (from BENCH_CPU_PROF=dir, i.e. node --cpu-prof in every
// server process) by self time: which functions, and which package, the CPU went to.
// Usage: tsx tooling/bench/profile-summary.ts <dir-or-file>... [--top N]
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** V8's pseudo-frames: time not spent in any function. */
const PSEUDO = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** The package a frame belongs to: a workspace package, a dependency, node, or native code. */
export function ownerOf(url: string, functionName = ''): string {
  if (url === '')
    return PSEUDO.has(functionName) ? functionName : 'native (fs, zlib, crypto bindings)';
  const dependency = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(
    url,
  );
  if (dependency) return dependency[1]!;
  const workspace = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (workspace) return `@slivingdoc/${workspace[2]}`;
  if (url.startsWith('node:')) return 'node';
  return url.replace(/^file:\/\//, '');
}

/** Self time in milliseconds per key (`function url:line`, or owner). */
export function selfTimes(
  profile: CpuProfile,
  keyOf: (node: ProfileNode) => string,
): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const key = keyOf(node);
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return totals;
}

/**
 * Attributes each sample to the nearest slivingdoc frame on its stack (native and library
 * time lands on the product function that asked for it), so `readdir` under a pack scan and
 * `readdir` under the notebook scan are told apart.
 */
export function nearestProductFrame(profile: CpuProfile): Map<number, ProfileNode | undefined> {
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const nearest = new Map<number, ProfileNode | undefined>();
  for (const node of profile.nodes) {
    let current: ProfileNode | undefined = node;
    while (current && !ownerOf(current.callFrame.url).startsWith('@slivingdoc/')) {
      const up = parent.get(current.id);
      current = up === undefined ? undefined : byId.get(up);
    }
    nearest.set(node.id, current);
  }
  return nearest;
}

async function profileFiles(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) {
      for (const name of await readdir(path))
        if (name.endsWith('.cpuprofile')) files.push(join(path, name));
    } else files.push(path);
  }
  return files;
}

function top(totals: Map<string, number>, n: number): string {
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([key, ms]) =>
        `${ms.toFixed(0).padStart(9)} ms ${((ms / all) * 100).toFixed(1).padStart(5)} %  ${key}`,
    )
    .join('\n');
}

async function main(argv: string[]): Promise<void> {
  const topIndex = argv.indexOf('--top');
  const n = topIndex >= 0 ? Number(argv[topIndex + 1]) : 30;
  const paths = argv.filter((a, i) => a !== '--top' && i !== topIndex + 1);
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const byProductFrame = new Map<string, number>();
  for (const file of await profileFiles(paths)) {
    const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
    const add = (into: Map<string, number>, from: Map<string, number>) => {
      for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
    };
    add(
      byOwner,
      selfTimes(profile, ({ callFrame: f }) => ownerOf(f.url, f.functionName)),
    );
    const nearest = nearestProductFrame(profile);
    add(
      byProductFrame,
      selfTimes(profile, (node) => {
        const frame = nearest.get(node.id)?.callFrame;
        if (!frame) return ownerOf(node.callFrame.url, node.callFrame.functionName);
        return `${frame.functionName || '(anonymous)'}  ${ownerOf(frame.url)}:${frame.lineNumber + 1}`;
      }),
    );
    add(
      byFunction,
      selfTimes(
        profile,
        ({ callFrame: f }) =>
          `${f.functionName || '(anonymous)'}  ${ownerOf(f.url, f.functionName)}:${f.lineNumber + 1}`,
      ),
    );
  }
  process.stdout.write(
    `self time by package\n${top(byOwner, n)}\n\nself time by function\n${top(byFunction, n)}\n\n` +
      `time by nearest slivingdoc function (callees folded in)\n${top(byProductFrame, n)}\n`,
  );
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  });
}
