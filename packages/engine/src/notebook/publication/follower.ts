/**
 * A member's side of group commit: connect to the holder's group endpoint (in memory when the
 * holder is in this process, see `link.ts`), send the change, then wait for `taken`, any number of `prepared` (the latest counts) and one verdict. Each
 * `prepared` is recorded (the caller's `record`: its publication input, in its P) before it is
 * acknowledged with `recorded`; the holder sends no CAS a member has not acknowledged. Before
 * it is taken a member can withdraw (cancellation, or its gate budget spent); once taken its
 * change may be in a CAS, so it waits for the verdict. A connection that ends without one means
 * the holder is gone: the caller then learns from the store what happened (see `prepared`).
 */
import { connect, type Socket } from 'node:net';
import type { FileStat } from '@slivingdoc/envelope';
import { inProcessGroup } from './endpoint';
import { type LinkEnd, type LinkEvents, memberSocketEnd } from './link';
import type {
  ExclusionReason,
  HolderMessage,
  MemberChange,
  MemberMessage,
  PreparedWire,
} from './messages';

/** What joining a group came to. */
export type JoinOutcome =
  /** Nobody serves the endpoint. */
  | { kind: 'refused' }
  | { kind: 'accepted'; generation: bigint; head: string; files: FileStat[] }
  | { kind: 'excluded'; reason: ExclusionReason }
  | { kind: 'unproven' }
  /** Withdrawn before being taken: the signal was aborted, or the gate budget ran out. */
  | { kind: 'withdrawn'; why: 'aborted' | 'deadline' }
  /** The connection ended without a verdict; `prepared` is the last proposal announced. */
  | { kind: 'holder-gone'; prepared: PreparedWire | undefined }
  /**
   * Recording a `prepared` failed: the member closed its connection without acknowledging it,
   * so no CAS carrying its change is sent (`error` is the recording's failure).
   */
  | { kind: 'unrecorded'; error: unknown };

/** Connects to `address`; `undefined` when nobody listens there. */
function connectTo(address: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const socket = connect(address);
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      socket.on('error', () => {});
      resolve(socket);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(undefined);
    });
  });
}

/**
 * Offers `change` to the group served at `address` and waits for its outcome: in memory when
 * this process serves it (the in-process queue), else over the socket. `deadline` (epoch ms)
 * bounds only the wait before being taken. `record` records a `prepared` in P (in the order
 * received) before it is acknowledged; the outcome is returned only once every recording
 * started has finished, so nothing writes the record after this returns.
 */
export async function joinGroup(
  address: string,
  change: MemberChange,
  opts: {
    signal: AbortSignal | undefined;
    deadline: number;
    record: (prepared: PreparedWire) => Promise<void>;
  },
): Promise<JoinOutcome> {
  // Looked up and joined with no await between: a group found here is still open.
  const local = inProcessGroup(address);
  const socket = local === undefined ? await connectTo(address) : undefined;
  if (local === undefined && socket === undefined) return { kind: 'refused' };
  const open = (events: LinkEvents<HolderMessage>): LinkEnd<MemberMessage> =>
    local === undefined ? memberSocketEnd(socket as Socket, events) : local.connectLocal(events);
  return new Promise<JoinOutcome>((resolve) => {
    let taken = false;
    let withdrawing: 'aborted' | 'deadline' | undefined;
    let prepared: PreparedWire | undefined;
    let settled = false;
    let recording: Promise<void> = Promise.resolve();
    let unrecorded: { error: unknown } | undefined;
    const settle = (outcome: JoinOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      link.destroy();
      void recording.then(() =>
        resolve(unrecorded ? { kind: 'unrecorded', ...unrecorded } : outcome),
      );
    };
    /** Records one `prepared`, then acknowledges it; a failure closes the link unacked. */
    const recordAndAck = (wire: PreparedWire) => {
      recording = recording.then(async () => {
        if (unrecorded !== undefined) return;
        try {
          await opts.record(wire);
        } catch (error) {
          unrecorded = { error };
          link.destroy();
          return;
        }
        await link.send({ t: 'recorded', publication: wire.publication }).catch(() => {});
      });
    };
    const withdraw = (why: 'aborted' | 'deadline') => {
      if (taken || withdrawing !== undefined) return;
      withdrawing = why;
      // The holder answers `withdrawn`, or `taken` if it took us first (the stream is ordered).
      link.send({ t: 'withdraw' }).catch(() => settle({ kind: 'withdrawn', why }));
    };
    const onAbort = () => withdraw('aborted');
    const onMessage = (message: HolderMessage | undefined) => {
      if (message === undefined) {
        link.destroy();
        return;
      }
      switch (message.t) {
        case 'taken':
          taken = true;
          return;
        case 'withdrawn':
          if (!taken) settle({ kind: 'withdrawn', why: withdrawing ?? 'aborted' });
          return;
        case 'prepared': {
          taken = true;
          const { t: _t, ...wire } = message;
          prepared = wire;
          recordAndAck(wire);
          return;
        }
        case 'accepted':
          settle({
            kind: 'accepted',
            generation: BigInt(message.generation),
            head: message.head,
            files: message.files,
          });
          return;
        case 'excluded':
          settle({ kind: 'excluded', reason: message.reason });
          return;
        case 'unproven':
          settle({ kind: 'unproven' });
      }
    };
    const onClosed = () => {
      if (!taken && withdrawing !== undefined) settle({ kind: 'withdrawn', why: withdrawing });
      else settle({ kind: 'holder-gone', prepared: taken ? prepared : undefined });
    };
    const link = open({ message: onMessage, closed: onClosed });
    const timer = setTimeout(() => withdraw('deadline'), Math.max(0, opts.deadline - Date.now()));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    link.send({ t: 'join', change }).catch(() => link.destroy());
    if (opts.signal?.aborted) withdraw('aborted');
  });
}
