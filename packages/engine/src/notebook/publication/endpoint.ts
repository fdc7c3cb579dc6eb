/**
 * The holder's side of group commit: while a process holds the publication gate it listens on
 * the group endpoint, where other local writers queue their changes (`join`); writers of the
 * same process queue through {@link GroupServer.connectLocal} instead, into the same queue. A
 * round takes whoever is queued (bounded by a member count and a byte budget) and answers each
 * taken member exactly once; closing the endpoint sends every member not taken `later`. A
 * taken member acknowledges each `prepared` with `recorded` once its publication input is in
 * its P (docs/engine.md, "A member's publication input"). A member's connection may drop at
 * any moment: a queued member is forgotten; a taken one is answered by its round, which leaves
 * it out of any CAS it has not acknowledged. A malformed or oversized message drops its sender
 * and nothing else.
 */
import { unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { EngineLogger } from '../../config';
import { holderSocketEnd, type LinkEnd, type LinkEvents, localLink } from './link';
import type { HolderMessage, MemberChange, MemberMessage } from './messages';

/** A member taken into a round: its change and the way to answer it. */
export interface TakenMember {
  readonly change: MemberChange;
  /** Sends one message; resolves `false` when the member is gone (never rejects). */
  send(message: HolderMessage): Promise<boolean>;
  /** Sends the member's verdict and ends its connection. */
  finish(message: HolderMessage): Promise<void>;
  /** Ends the connection without a verdict: the member learns the outcome from the store. */
  abandon(): void;
  /** True once the member's connection has closed. */
  readonly gone: boolean;
  /**
   * Resolves `true` once the member acknowledged the `prepared` of `publication` (its
   * publication input is recorded), `false` when its connection closes first or `giveUp` aborts.
   */
  recorded(publication: string, giveUp: AbortSignal): Promise<boolean>;
}

interface Connection {
  link: LinkEnd<HolderMessage>;
  state: 'connected' | 'queued' | 'taken' | 'done';
  change?: MemberChange;
  bytes: number;
  closed: boolean;
  /** The publication id of the latest `prepared` the member acknowledged. */
  recorded: string | undefined;
  /** Checks of pending {@link TakenMember.recorded} waits, run on every ack and on close. */
  readonly waiters: Set<() => void>;
}

function wake(connection: Connection): void {
  for (const waiter of [...connection.waiters]) waiter();
}

function changeBytes(change: MemberChange): number {
  let bytes = change.message.byteLength;
  for (const blob of change.blobs.values()) bytes += blob.byteLength;
  return bytes;
}

/** See {@link TakenMember.recorded}. */
function awaitRecorded(
  connection: Connection,
  publication: string,
  giveUp: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      giveUp.removeEventListener('abort', onGiveUp);
      connection.waiters.delete(check);
      resolve(ok);
    };
    const check = () => {
      if (connection.recorded === publication) done(true);
      else if (connection.closed) done(false);
    };
    const onGiveUp = () => done(false);
    connection.waiters.add(check);
    giveUp.addEventListener('abort', onGiveUp, { once: true });
    check();
    if (giveUp.aborted) done(false);
  });
}

/** The endpoints this process serves, by address. */
const serving = new Map<string, GroupServer>();

/** Members joined by each transport in this process, for tests (see {@link joinCounts}). */
const joined = { socket: 0, inProcess: 0 };

/** Whether members in this process join its holder in memory (on unless a test turns it off). */
let inProcessJoins = true;

/**
 * How many members joined a group this process served, by transport (a diagnostic the tests
 * use to tell that in-process members used no socket).
 */
export function joinCounts(): { socket: number; inProcess: number } {
  return { ...joined };
}

/** Test hook: `false` makes members in this process join over the socket, as other processes do. */
export function setInProcessJoins(on: boolean): void {
  inProcessJoins = on;
}

/**
 * The group this process serves at `address`, when a member in this process can join it in
 * memory (docs/engine.md, "Group commit": the in-process queue).
 */
export function inProcessGroup(address: string): GroupServer | undefined {
  return inProcessJoins ? serving.get(address) : undefined;
}

/**
 * How many members are queued at the endpoint this process serves at `address` (0 when it
 * serves none): a diagnostic the tests use to know a group has formed.
 */
export function queuedAt(address: string): number {
  return serving.get(address)?.queued ?? 0;
}

/** The group endpoint of one turn; bound only by the gate's holder. */
export class GroupServer {
  readonly #queue: Connection[] = [];
  readonly #connections = new Set<Connection>();
  #closing = false;

  private constructor(
    private readonly server: Server,
    private readonly address: string,
    private readonly logger: EngineLogger,
  ) {}

  /**
   * Listens on `address`; `undefined` (logged) when it cannot, and the turn then publishes
   * alone. A socket file left by a dead holder is removed first: only the gate's holder binds
   * this address, so whatever is there is stale.
   */
  static async open(address: string, logger: EngineLogger): Promise<GroupServer | undefined> {
    if (!address.startsWith('\0')) await unlink(address).catch(() => {});
    const server = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        logger.warn({ code: err.code }, 'group commit endpoint unavailable; publishing alone');
        resolve(false);
      });
      server.listen({ path: address, exclusive: true }, () => resolve(true));
    });
    if (!ok) return undefined;
    server.on('error', () => {});
    const group = new GroupServer(server, address, logger);
    server.on('connection', (socket) => group.#accept(socket));
    serving.set(address, group);
    return group;
  }

  #accept(socket: Socket): void {
    joined.socket += 1;
    this.#connect((events) =>
      holderSocketEnd(socket, events, () =>
        this.logger.warn({}, 'group commit: dropped a member that sent a malformed message'),
      ),
    );
  }

  /**
   * A member of this process joins without the socket: `member` is told what the holder sends;
   * the returned end is the member's (see `follower.ts`).
   */
  connectLocal(member: LinkEvents<HolderMessage>): LinkEnd<MemberMessage> {
    joined.inProcess += 1;
    let memberEnd: LinkEnd<MemberMessage> | undefined;
    this.#connect((events) => {
      const link = localLink(events, member);
      memberEnd = link.member;
      return link.holder;
    });
    return memberEnd as LinkEnd<MemberMessage>;
  }

  /** A new connection over the link `open` makes for the connection's events. */
  #connect(open: (events: LinkEvents<MemberMessage>) => LinkEnd<HolderMessage>): void {
    const connection: Connection = {
      // The events fire only after this returns (a socket's, or a local link's microtask).
      link: open({
        message: (message) => this.#onMessage(connection, message),
        closed: () => this.#onClosed(connection),
      }),
      state: 'connected',
      bytes: 0,
      closed: false,
      recorded: undefined,
      waiters: new Set(),
    };
    this.#connections.add(connection);
  }

  #onClosed(connection: Connection): void {
    connection.closed = true;
    wake(connection);
    this.#connections.delete(connection);
    if (connection.state === 'queued' || connection.state === 'connected') {
      this.#dequeue(connection);
      connection.state = 'done';
    }
  }

  #onMessage(connection: Connection, message: MemberMessage | undefined): void {
    if (connection.state === 'connected') {
      if (message?.t !== 'join') {
        this.#drop(connection);
        return;
      }
      connection.change = message.change;
      connection.bytes = changeBytes(message.change);
      connection.state = 'queued';
      // Joined as the turn ends: told `later` like everyone still queued.
      if (this.#closing) {
        connection.state = 'done';
        void this.#finish(connection, { t: 'excluded', reason: 'later' });
        return;
      }
      this.#queue.push(connection);
      return;
    }
    if (message?.t === 'withdraw') {
      // Once taken, a member's change may be in a CAS: it stays, and is answered as usual.
      if (connection.state !== 'queued') return;
      this.#dequeue(connection);
      connection.state = 'done';
      void this.#finish(connection, { t: 'withdrawn' });
      return;
    }
    if (message?.t !== 'recorded' || connection.state === 'queued') {
      this.#drop(connection);
      return;
    }
    // An ack after the verdict (the member was left out meanwhile) changes nothing.
    if (connection.state !== 'taken') return;
    connection.recorded = message.publication;
    wake(connection);
  }

  #drop(connection: Connection): void {
    this.logger.warn({}, 'group commit: dropped a member that sent a malformed message');
    this.#dequeue(connection);
    if (connection.state !== 'taken') connection.state = 'done';
    connection.link.destroy();
  }

  #dequeue(connection: Connection): void {
    const at = this.#queue.indexOf(connection);
    if (at >= 0) this.#queue.splice(at, 1);
  }

  /** How many members are queued. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Takes queued members in arrival order, at most `maxMembers` and `byteBudget` bytes of
   * messages and blobs (the first is taken whatever its size), telling each it was taken.
   */
  take(maxMembers: number, byteBudget: number): TakenMember[] {
    const taken: TakenMember[] = [];
    let bytes = 0;
    while (taken.length < maxMembers && this.#queue.length > 0) {
      const next = this.#queue[0] as Connection;
      if (taken.length > 0 && bytes + next.bytes > byteBudget) break;
      this.#queue.shift();
      bytes += next.bytes;
      next.state = 'taken';
      const member = this.#member(next);
      void member.send({ t: 'taken' });
      taken.push(member);
    }
    return taken;
  }

  #member(connection: Connection): TakenMember {
    const send = (message: HolderMessage) =>
      connection.link.send(message).then(
        () => true,
        () => false,
      );
    return {
      change: connection.change as MemberChange,
      send,
      finish: async (message) => {
        connection.state = 'done';
        await this.#finish(connection, message);
      },
      abandon: () => {
        connection.state = 'done';
        connection.link.destroy();
      },
      get gone() {
        return connection.closed;
      },
      recorded: (publication, giveUp) => awaitRecorded(connection, publication, giveUp),
    };
  }

  async #finish(connection: Connection, message: HolderMessage): Promise<void> {
    await connection.link.send(message).catch(() => {});
    connection.link.end();
  }

  /**
   * Stops listening; every member still queued is told `later`, then every connection is
   * closed. A taken member normally had its verdict already; one that did not (the turn failed
   * unexpectedly) learns from the store, exactly as if the holder had died.
   */
  async close(): Promise<void> {
    this.#closing = true;
    if (serving.get(this.address) === this) serving.delete(this.address);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all(
      this.#queue.splice(0).map((connection) => {
        connection.state = 'done';
        return this.#finish(connection, { t: 'excluded', reason: 'later' });
      }),
    );
    // Whatever was written is in the kernel already: the peer still reads it after this.
    for (const connection of this.#connections) connection.link.destroy();
    await closed;
  }
}
