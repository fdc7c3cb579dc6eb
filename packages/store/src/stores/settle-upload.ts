import { createHash } from 'node:crypto';
import { StoreError } from '../errors';

/**
 * Settles an upload whose outcome is unknown (contract §7): reads the key back and proves the
 * stored object has exactly the intended size and SHA-256. Returns normally only when proven;
 * otherwise rethrows the original ambiguous error.
 */
export async function settleAmbiguousUpload(
  readBack: () => Promise<AsyncIterable<Uint8Array> | undefined>,
  body: Uint8Array,
  original: StoreError,
): Promise<void> {
  let stream: AsyncIterable<Uint8Array> | undefined;
  try {
    stream = await readBack();
  } catch {
    throw original;
  }
  if (stream === undefined) throw original;
  const hash = createHash('sha256');
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += chunk.byteLength;
      hash.update(chunk);
    }
  } catch {
    throw original;
  }
  const intended = createHash('sha256').update(body).digest('hex');
  if (size !== body.byteLength || hash.digest('hex') !== intended) throw original;
}

/** Runs `upload`; on an `ambiguous` StoreError, settles it by reading the key back. */
export async function putProven(
  upload: () => Promise<void>,
  readBack: () => Promise<AsyncIterable<Uint8Array> | undefined>,
  body: Uint8Array,
): Promise<void> {
  try {
    await upload();
  } catch (err) {
    if (!(err instanceof StoreError) || err.kind !== 'ambiguous') throw err;
    await settleAmbiguousUpload(readBack, body, err);
  }
}
