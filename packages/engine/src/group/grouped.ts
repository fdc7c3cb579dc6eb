/**
 * A commit's passage through the publication gate with group commit on: join the turn of
 * whoever holds the gate (its change then publishes in that holder's group), or take the gate
 * and hold a turn of its own (publishing the changes that queue meanwhile with its own). With
 * the gate unavailable or the waiting budget spent, the caller attempts as without grouping.
 */
import type { FileStat } from '@slivingdoc/envelope';
import { type OwnChange, recordOwnInput, type Settled } from '../attempt';
import type { CallState, DirContext } from '../context';
import { publicationUnproven } from '../errors';
import { groupEndpoint, type PublicationGate } from '../gate';
import { resolve } from '../publish';
import { MAX_FRAME_BYTES } from './frames';
import { joinGroup } from './member';
import type { MemberChange, PreparedWire } from './messages';
import { holdTurn } from './turn';

/** What the grouped passage came to. */
export type GroupedOutcome =
  /** This call held the turn; its own step. */
  | { kind: 'held'; step: Settled }
  /** This call's change was accepted in another holder's group. */
  | {
      kind: 'member';
      generation: bigint;
      head: string;
      /** The diffstat of its own change, when the holder sent it. */
      files: FileStat[] | undefined;
      /** Its own commit in the group's chain, when `files` must be computed from it. */
      commit: string | undefined;
    }
  /** Attempt as without grouping (budget spent, or the gate unavailable). */
  | { kind: 'ungrouped' };

/** Gate polls (5 ms doubling) while neither a group nor the gate is to be had, then a full wait. */
const GATE_POLLS = 6;

/** Frames carry blobs as base64 (4/3) plus JSON: changes larger than this attempt alone. */
const MAX_CHANGE_BYTES = Math.floor((MAX_FRAME_BYTES * 3) / 4) - 1024 * 1024;

/** The caller's change as a member sends it; `undefined` when too large to send. */
async function memberChange(ctx: DirContext, own: OwnChange): Promise<MemberChange | undefined> {
  const changes: MemberChange['changes'] = own.changed.map((path) => [
    path,
    own.local.entries.get(path) ?? null,
  ]);
  const blobs = new Map<string, Uint8Array>();
  let bytes = own.message.byteLength;
  for (const [, oid] of changes) {
    if (oid === null || blobs.has(oid)) continue;
    const content = await ctx.db.readBlob(oid);
    bytes += content.byteLength;
    if (bytes > MAX_CHANGE_BYTES) return undefined;
    blobs.set(oid, content);
  }
  const { base } = own.entry;
  return {
    base: { generation: base.generation, head: base.head },
    changes,
    blobs,
    message: own.message,
    author: own.author,
  };
}

/**
 * The holder vanished after announcing `prepared`: contract §9's resolution of an ambiguous CAS,
 * by the member itself. Landed → accepted with the group's head; provably lost → `undefined`
 * (attempt again); else PUBLICATION_UNPROVEN.
 */
async function resolvePrepared(
  ctx: DirContext,
  prepared: PreparedWire,
): Promise<GroupedOutcome | undefined> {
  const resolution = await resolve(
    ctx,
    {
      publication: prepared.publication,
      position: BigInt(prepared.position),
      conditionedOn: prepared.conditionedOn ?? undefined,
    },
    'ambiguous',
  );
  if (resolution.verdict === 'lost') return undefined;
  if (resolution.verdict === 'unproven') throw publicationUnproven();
  return {
    kind: 'member',
    generation: BigInt(prepared.generation),
    head: prepared.head,
    files: undefined,
    commit: prepared.commit,
  };
}

/** Runs the grouped passage of one commit (docs/engine.md, "Group commit"). */
export async function commitGrouped(
  ctx: DirContext,
  call: CallState,
  own: OwnChange,
  gate: PublicationGate,
): Promise<GroupedOutcome> {
  const address = groupEndpoint(ctx.cfg);
  const attempts = ctx.cfg.commitRetries + 1;
  let change: MemberChange | undefined;
  let solo = false;
  let polls = 0;
  for (;;) {
    call.signal?.throwIfAborted();
    if (gate.remainingMs <= 0) return { kind: 'ungrouped' };
    if (!solo) {
      change ??= await memberChange(ctx, own);
      if (change === undefined) solo = true;
    }
    if (!solo && change !== undefined) {
      const joined = await joinGroup(address, change, {
        signal: call.signal,
        deadline: gate.deadline,
        // As a solo attempt does before its CAS: a kill after the group's CAS landed must not
        // make the next call publish these lines again.
        record: (prepared) =>
          recordOwnInput(ctx, own, {
            generation: BigInt(prepared.generation),
            head: prepared.head,
            tree: prepared.tree,
          }),
      });
      if (joined.kind === 'accepted') {
        return { ...joined, kind: 'member', commit: undefined };
      }
      if (joined.kind === 'unproven') {
        call.remoteAccepted = 'unknown';
        throw publicationUnproven();
      }
      // Not acknowledged, so in no CAS: the failure (say a full disk) is this call's answer.
      if (joined.kind === 'unrecorded') throw joined.error;
      if (joined.kind === 'withdrawn') {
        if (joined.why === 'aborted') call.signal?.throwIfAborted();
        return { kind: 'ungrouped' };
      }
      if (joined.kind === 'excluded') {
        // `conflict` and `solo`: attempt alone, after the group, as if it had not joined.
        if (joined.reason !== 'later') solo = true;
        polls = 0;
        continue;
      }
      if (joined.kind === 'holder-gone') {
        if (joined.prepared !== undefined) {
          const resolved = await resolvePrepared(ctx, joined.prepared);
          if (resolved !== undefined) return resolved;
        }
        continue;
      }
      // refused: nobody serves a group; take the gate.
    }
    const waitMs =
      solo || polls >= GATE_POLLS ? gate.remainingMs : Math.min(gate.remainingMs, 5 * 2 ** polls);
    const release = await gate.take(waitMs);
    if (release === 'unavailable') return { kind: 'ungrouped' };
    if (release === 'busy') {
      polls += 1;
      continue;
    }
    try {
      return { kind: 'held', step: await holdTurn(ctx, call, own, { address, attempts }) };
    } finally {
      await release();
    }
  }
}
