import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CURRENT_KEY,
  createEmbeddedStore,
  encodeManifest,
  firstManifest,
  newUuidV7,
} from '@slivingdoc/store';

/** What to plant: the head's files (flat names) and the names whose blobs the pack leaves out. */
export interface PlantedHead {
  files: Record<string, string | Uint8Array>;
  omitBlobsOf?: string[];
}

/**
 * Publishes a hand-made accepted notebook into an embedded store that has no `current` yet, the
 * way a damaged or hostile writer would: real git (an independent writer of git objects, run
 * by the test only) makes the blobs, the tree, the commit and a pack of exactly the objects
 * asked for; the store package uploads that pack under a checkpoint key and creates `current`
 * with a manifest whose descriptor matches the pack's size and SHA-256. Everything that is
 * checked before the objects themselves therefore passes. Returns the head commit id.
 */
export async function plantHead(
  storeDir: string,
  prefix: string,
  head: PlantedHead,
): Promise<string> {
  const repo = mkdtempSync(join(tmpdir(), 'slivingdoc-planted-'));
  try {
    const git = (args: string[], input: string | Uint8Array = ''): string =>
      execFileSync('git', args, { cwd: repo, env: gitEnv(repo), input, encoding: 'utf8' }).trim();
    git(['init', '--quiet', '--bare', '.']);
    const blobs = Object.entries(head.files).map(([name, content]) => ({
      name,
      oid: git(['hash-object', '-w', '--stdin'], content),
    }));
    const tree = git(
      ['mktree'],
      blobs.map(({ name, oid }) => `100644 blob ${oid}\t${name}\n`).join(''),
    );
    const commit = git(['commit-tree', tree, '-m', 'planted']);
    const omitted = new Set(head.omitBlobsOf ?? []);
    const packed = [commit, tree, ...blobs.filter((b) => !omitted.has(b.name)).map((b) => b.oid)];
    // Whole objects only: the engine's packs never carry deltas, and neither should this one.
    const pack = execFileSync('git', ['pack-objects', '--stdout', '--window=0', '-q'], {
      cwd: repo,
      env: gitEnv(repo),
      input: `${packed.join('\n')}\n`,
    });
    const manifest = firstManifest({
      head: commit,
      sha256: createHash('sha256').update(pack).digest('hex'),
      size: BigInt(pack.byteLength),
      checkpointId: newUuidV7(),
      publication: newUuidV7(),
    });
    const store = await createEmbeddedStore({ dir: storeDir, prefix });
    await store.putImmutable(manifest.checkpoint.key, pack, {});
    await store.createIfAbsent(CURRENT_KEY, encodeManifest(manifest));
    await store.close?.();
    return commit;
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/** Git with no system or user configuration, and the identity and clock the engine writes. */
function gitEnv(home: string): NodeJS.ProcessEnv {
  const who = { name: 'slivingdoc', email: 'slivingdoc@localhost', date: '1700000000 +0000' };
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: who.name,
    GIT_AUTHOR_EMAIL: who.email,
    GIT_AUTHOR_DATE: who.date,
    GIT_COMMITTER_NAME: who.name,
    GIT_COMMITTER_EMAIL: who.email,
    GIT_COMMITTER_DATE: who.date,
  };
}
