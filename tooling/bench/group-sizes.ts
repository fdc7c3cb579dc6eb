/**
 * Group-size distribution of a store's recent history (docs/engine.md, "Group commit"): how
 * many commits each increment published after chain position `after`, read from the packs
 * themselves (one commit per member, chained from the increment's parent to its head).
 */
import { importPack } from '@slivingdoc/merge';
import { openMemoryObjectDb } from '@slivingdoc/merge/testing';
import { CURRENT_KEY, decodeManifest, type ObjectStore } from '@slivingdoc/store';

/** The chain position of the newest increment (0 when there is none). */
export async function lastPosition(store: ObjectStore): Promise<bigint> {
  const current = await store.get(CURRENT_KEY);
  if (current === undefined) return 0n;
  const manifest = decodeManifest(current.body);
  return manifest.increments.at(-1)?.generation ?? manifest.checkpoint.throughGeneration;
}

/** Commits per increment published after position `after`, in chain order. */
export async function groupSizes(store: ObjectStore, after: bigint): Promise<number[]> {
  const current = await store.get(CURRENT_KEY);
  if (current === undefined) return [];
  const manifest = decodeManifest(current.body);
  const sizes: number[] = [];
  for (const increment of manifest.increments) {
    if (increment.generation <= after) continue;
    const pack = await store.get(increment.key);
    if (pack === undefined) continue;
    const db = openMemoryObjectDb();
    await importPack(db, pack.body);
    let size = 0;
    for (let oid: string | undefined = increment.head; oid !== increment.parent; size += 1) {
      oid = (await db.readCommit(oid as string)).parent;
    }
    sizes.push(size);
  }
  return sizes;
}

/** `size×count` pairs, smallest size first, e.g. `1×3 2×1 14×2`. */
export function describeSizes(sizes: number[]): string {
  const counts = new Map<number, number>();
  for (const size of sizes) counts.set(size, (counts.get(size) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([size, count]) => `${size}×${count}`)
    .join(' ');
}
