/**
 * How a member and the holder of group commit talk. Between processes: a Unix socket of frames
 * (`frames.ts`, the messages encoded as JSON, blobs as base64). Within one process (the
 * sessions of one `serve --listen` hub): a pair of ends that hand each message over as it is,
 * in order, on a microtask (no socket, no encoding, no copy). Both give each end the other's
 * messages in the order sent, then one `closed`, so the member's and the holder's logic is one
 * for both (docs/engine.md, "Group commit").
 */
import type { Socket } from 'node:net';
import { readFrames, writeFrame } from './frames';
import {
  decodeHolderMessage,
  decodeMemberMessage,
  encodeMemberMessage,
  type HolderMessage,
  type MemberMessage,
} from './messages';

/** One end of a link: what it sends, and how it ends the link. */
export interface LinkEnd<Out> {
  /** Sends one message after those sent before; rejects when the link is closed. */
  send(message: Out): Promise<void>;
  /** Ends the link after what was sent (the other end receives it, then sees the link closed). */
  end(): void;
  /** Ends the link at once. */
  destroy(): void;
}

/** What an end is told: each message (`undefined` when malformed), then once that it closed. */
export interface LinkEvents<In> {
  message(message: In | undefined): void;
  closed(): void;
}

/** A socket's end of a link, sending `Out` encoded by `encode` and decoding `In` by `decode`. */
function socketEnd<Out, In>(
  socket: Socket,
  events: LinkEvents<In>,
  codec: {
    encode: (message: Out) => object;
    decode: (raw: Record<string, unknown>) => In | undefined;
    malformed: () => void;
  },
): LinkEnd<Out> {
  socket.on('error', () => {});
  socket.once('close', () => events.closed());
  readFrames(socket, (raw) => events.message(codec.decode(raw)), codec.malformed);
  return {
    send: (message) => writeFrame(socket, codec.encode(message)),
    end: () => socket.end(),
    destroy: () => socket.destroy(),
  };
}

/** The member's end of a connected socket. */
export function memberSocketEnd(
  socket: Socket,
  events: LinkEvents<HolderMessage>,
): LinkEnd<MemberMessage> {
  return socketEnd(socket, events, {
    encode: encodeMemberMessage,
    decode: decodeHolderMessage,
    malformed: () => {},
  });
}

/** The holder's end of an accepted socket; `malformed` is told of a frame that is not one. */
export function holderSocketEnd(
  socket: Socket,
  events: LinkEvents<MemberMessage>,
  malformed: () => void,
): LinkEnd<HolderMessage> {
  return socketEnd(socket, events, {
    encode: (message) => message,
    decode: decodeMemberMessage,
    malformed,
  });
}

/**
 * A link within one process. Messages both ways and the close share one microtask queue, so
 * each end sees the other's messages in order and every message sent before the close.
 */
export function localLink(
  toHolder: LinkEvents<MemberMessage>,
  toMember: LinkEvents<HolderMessage>,
): { holder: LinkEnd<HolderMessage>; member: LinkEnd<MemberMessage> } {
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    queueMicrotask(() => {
      toMember.closed();
      toHolder.closed();
    });
  };
  const end = <T>(to: LinkEvents<T>): LinkEnd<T> => ({
    send: (message) => {
      if (!open) return Promise.reject(new Error('group commit link closed'));
      queueMicrotask(() => to.message(message));
      return Promise.resolve();
    },
    end: close,
    destroy: close,
  });
  return { holder: end(toMember), member: end(toHolder) };
}
