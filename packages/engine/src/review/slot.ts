/**
 * Which proposal a directory is on (docs/review.md). A directory is identified across hosts by
 * its participant identity (the private-state key of its path and the store); its proposals are
 * `<first 16 hex of that key>-1`, `-2`, … in order. P remembers the directory's current number
 * and whether it has an open proposal; the store stays the authority, so a lost or stale file
 * only costs a few reads.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { privateStateKey } from '@slivingdoc/workspace';
import type { DirContext } from '../context';

/** What P remembers. */
export interface SlotMemo {
  /** The sequence number of the directory's latest proposal (or the next one to use). */
  seq: number;
  /** True while that proposal may be open (an outcome not yet reported). */
  open: boolean;
}

const FILE = 'proposal.json';

/** The directory's participant identity. */
export function participantOf(ctx: DirContext): string {
  return privateStateKey(ctx.dir, ctx.cfg.store.identity);
}

/** The id of the directory's proposal number `seq`. */
export function proposalIdOf(participant: string, seq: number): string {
  return `${participant.slice(0, 16)}-${seq}`;
}

/** P's memo (a missing or unreadable one: start at 1, nothing known open). */
export async function readSlot(ctx: DirContext): Promise<SlotMemo> {
  try {
    const value = JSON.parse(await readFile(join(ctx.priv.dir, FILE), 'utf8')) as SlotMemo;
    if (Number.isSafeInteger(value.seq) && value.seq >= 1 && typeof value.open === 'boolean') {
      return value;
    }
  } catch {
    // Absent or damaged: the store is probed from the first number on.
  }
  return { seq: 1, open: false };
}

/** Records the memo (written whole, then renamed, so a kill leaves the old or the new one). */
export async function writeSlot(ctx: DirContext, memo: SlotMemo): Promise<void> {
  const target = join(ctx.priv.dir, FILE);
  const temp = `${target}.tmp`;
  await writeFile(temp, JSON.stringify(memo), { mode: 0o600 });
  await rename(temp, target);
}
