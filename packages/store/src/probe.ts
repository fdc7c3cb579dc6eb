import { isStoreError } from './errors';
import { probeKey } from './keys';
import type { EtagForm, ObjectStore } from './object-store';
import { newUuidV7 } from './uuid';

/** The probe's verdict; `reason` is one redacted line (no key, credential or path in it). */
export type ProbeResult = { ok: true } | { ok: false; reason: string };

class ProbeFailure extends Error {}

function fail(reason: string): never {
  throw new ProbeFailure(reason);
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);

/** A step's failure as a reason: the step and the store's status token, never its message. */
function describe(step: string, err: unknown): string {
  if (isStoreError(err)) {
    const detail = err.code && err.code !== 'INJECTED' ? ` (${err.code})` : '';
    return `${step}: ${err.kind}${detail}`;
  }
  return `${step}: unexpected failure`;
}

/** A different ETag of the same shape: flips the last hex-ish character. */
function wrongEtag(etag: string): string {
  const bare = etag.replace(/"/g, '');
  const last = bare.at(-1) === '0' ? '1' : '0';
  return etag.replace(bare, `${bare.slice(0, -1)}${last}`);
}

/**
 * The compatibility probe (SPEC §7), run at startup of every command that touches the store.
 * Under `probe/<uuidv7>` it proves: create-if-absent succeeds once and fails the second time;
 * the bytes and ETag read back; a wrong-ETag replace fails and changes nothing; a right-ETag
 * replace succeeds and is read back immediately. On a store that takes an ETag form (S3), it
 * tries the current form, then the other, and keeps the one the store honours. The probe key
 * is deleted afterwards, also after a failure. Never throws for a store failure: a store that
 * fails any step is `{ ok: false, reason }`.
 */
export async function runProbe(store: ObjectStore): Promise<ProbeResult> {
  const key = probeKey(newUuidV7());
  const first = new TextEncoder().encode(`slivingdoc probe ${key} 1`);
  const second = new TextEncoder().encode(`slivingdoc probe ${key} 2`);
  let created = false;
  let step = 'create-if-absent';
  try {
    const { etag } = await store.createIfAbsent(key, first);
    created = true;
    step = 'second create-if-absent';
    try {
      await store.createIfAbsent(key, second);
      fail('second create-if-absent succeeded: the store ignores If-None-Match');
    } catch (err) {
      if (!isStoreError(err, 'precondition-failed')) throw err;
    }
    step = 'read back';
    const read = await store.get(key);
    if (!read || !sameBytes(read.body, first)) fail('read back: bytes differ from the write');
    if (read.etag !== etag) fail('read back: ETag differs from the write');
    await proveReplace(store, key, etag, second, (s) => {
      step = s;
    });
    return { ok: true };
  } catch (err) {
    if (err instanceof ProbeFailure) return { ok: false, reason: err.message };
    return { ok: false, reason: describe(step, err) };
  } finally {
    if (created) await store.deleteMany([key]).catch(() => undefined);
  }
}

/** Wrong-ETag then right-ETag replace, in each ETag form the store may want. */
async function proveReplace(
  store: ObjectStore,
  key: string,
  etag: string,
  body: Uint8Array,
  onStep: (step: string) => void,
): Promise<void> {
  const forms: (EtagForm | undefined)[] = store.useEtagForm
    ? [store.etagForm ?? 'quoted', store.etagForm === 'bare' ? 'quoted' : 'bare']
    : [undefined];
  for (const form of forms) {
    if (form) store.useEtagForm!(form);
    onStep('wrong-ETag replace');
    try {
      await store.replaceIfMatch(key, body, wrongEtag(etag));
      fail('wrong-ETag replace succeeded: the store ignores If-Match');
    } catch (err) {
      if (!isStoreError(err, 'precondition-failed')) throw err;
    }
    const after = await store.get(key);
    if (!after || after.etag !== etag) fail('wrong-ETag replace changed the object');
    onStep('right-ETag replace');
    let replaced: { etag: string };
    try {
      replaced = await store.replaceIfMatch(key, body, etag);
    } catch (err) {
      if (isStoreError(err, 'precondition-failed')) continue; // try the other form
      throw err;
    }
    onStep('read after replace');
    const read = await store.get(key);
    if (!read || !sameBytes(read.body, body) || read.etag !== replaced.etag) {
      fail('read after replace: the new bytes are not visible immediately');
    }
    return;
  }
  fail('right-ETag replace refused in every ETag form');
}
