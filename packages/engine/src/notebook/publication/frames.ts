/**
 * Length-prefixed JSON frames over a local stream socket (the group-commit channel): a 4-byte
 * big-endian length, then that many bytes of UTF-8 JSON. Hand-written rather than a library:
 * it is twenty lines, and the hard size cap and the "malformed = drop the peer" rule must be
 * exactly ours. A frame over the cap or that is not a JSON object ends the connection.
 */
import type { Socket } from 'node:net';

/** The largest frame either side accepts (a member's change with its blobs, base64). */
export const MAX_FRAME_BYTES = 24 * 1024 * 1024;

const HEADER_BYTES = 4;

/** Thrown (to the reader's `onError`) for a frame over the cap or that is not a JSON object. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/** Encodes one frame; throws {@link FrameError} when it would exceed the cap. */
export function encodeFrame(message: object): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.byteLength > MAX_FRAME_BYTES) throw new FrameError('frame exceeds the size cap');
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(body.byteLength, 0);
  return Buffer.concat([header, body]);
}

/**
 * Writes one frame; resolves once the bytes are handed to the kernel (so a peer still reads
 * them if this process dies right after), rejects when the socket is gone.
 */
export function writeFrame(socket: Socket, message: object): Promise<void> {
  const frame = encodeFrame(message);
  return new Promise((resolve, reject) => {
    if (socket.destroyed || !socket.writable) {
      reject(new Error('socket closed'));
      return;
    }
    socket.write(frame, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * Feeds `onFrame` every complete frame read from `socket`, in order; a frame over the cap or
 * that does not parse to a JSON object calls `onError` once and destroys the socket.
 */
export function readFrames(
  socket: Socket,
  onFrame: (message: Record<string, unknown>) => void,
  onError: (err: FrameError) => void,
): void {
  let buffered: Buffer[] = [];
  let length = 0;
  let failed = false;
  const fail = (why: string) => {
    if (failed) return;
    failed = true;
    buffered = [];
    socket.destroy();
    onError(new FrameError(why));
  };
  socket.on('data', (chunk: Buffer) => {
    if (failed) return;
    buffered.push(chunk);
    length += chunk.byteLength;
    while (!failed && length >= HEADER_BYTES) {
      // Concatenated only when a whole frame is there: a large frame arrives in many chunks.
      const head =
        (buffered[0] as Buffer).byteLength >= HEADER_BYTES ? buffered[0] : Buffer.concat(buffered);
      const size = (head as Buffer).readUInt32BE(0);
      if (size > MAX_FRAME_BYTES) return fail('frame exceeds the size cap');
      if (length < HEADER_BYTES + size) return;
      const all = buffered.length === 1 ? (buffered[0] as Buffer) : Buffer.concat(buffered);
      const body = all.subarray(HEADER_BYTES, HEADER_BYTES + size);
      const rest = all.subarray(HEADER_BYTES + size);
      buffered = rest.byteLength > 0 ? [rest] : [];
      length = rest.byteLength;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return fail('frame is not JSON');
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return fail('frame is not a JSON object');
      onFrame(parsed as Record<string, unknown>);
    }
  });
}
