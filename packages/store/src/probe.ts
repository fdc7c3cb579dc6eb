import { isStoreError, type StoreError } from './errors';
import { CURRENT_KEY, probeKey } from './keys';
import type { ObjectStore } from './object-store';
import { newUuidV7 } from './uuid';

/**
 * The probe's verdict; `reason` is one redacted line (no key, credential or path in it).
 * `incompatible`: the store gave a definite wrong answer (INCOMPATIBLE_STORE). `unreachable`:
 * every attempt within the budget ended in a transient failure, so nothing was proven either
 * way. `read-only`: the first write was refused with the store's `AccessDenied` code and
 * `current` can still be read, so the credentials may read but not write (a reader, contract
 * §7). `denied`: the first write was refused with `AccessDenied` and so was the read of
 * `current`: the credentials can do nothing under this prefix.
 */
export type ProbeResult =
  | { ok: true }
  | {
      ok: false;
      verdict: 'incompatible' | 'unreachable' | 'read-only' | 'denied';
      reason: string;
      /** The failing store answer's status token, when it had one (`SlowDown`, `ENOSPC`). */
      code?: string;
    };

/** How hard the probe tries before calling a store unreachable. */
export interface ProbeOptions {
  /** Most attempts, each on a fresh probe key (default 8). */
  attempts?: number;
  /** No attempt starts once this many milliseconds have passed since the first (default 60 s). */
  budgetMs?: number;
  /** Sleeps between attempts; tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock the budget is measured on (default `Date.now`). */
  now?: () => number;
  /** Jitter source in [0, 1) (default `Math.random`). */
  random?: () => number;
}

const DEFAULT_ATTEMPTS = 8;
const DEFAULT_BUDGET_MS = 60_000;
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 2_000;
const DELETE_ATTEMPTS = 3;

/** A definite wrong answer: the store is not compatible. */
class ProbeFailure extends Error {}

/** A transient failure of one attempt: worth a fresh attempt on a fresh key. */
class ProbeInterrupted extends Error {}

/** A verdict reached before the probe's end (a reader's refused write). */
class ProbeVerdict extends Error {
  constructor(readonly result: ProbeResult) {
    super('probe verdict');
  }
}

/**
 * The store's refusal of a write for want of permission. Only its own `AccessDenied` code
 * counts: QuotaExceeded, SignatureDoesNotMatch, RequestTimeTooSkewed and every other 401/403
 * say nothing about what these credentials may do, and stay failures of the probe.
 */
function isWriteDenied(err: unknown): boolean {
  return isStoreError(err, 'access-denied') && err.code === 'AccessDenied';
}

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

/** A different ETag of the same shape: flips its last letter or digit (quotes stay). */
function wrongEtag(etag: string): string {
  const at = etag.search(/[0-9A-Za-z][^0-9A-Za-z]*$/);
  if (at < 0) return `${etag}0`;
  return `${etag.slice(0, at)}${etag[at] === '0' ? '1' : '0'}${etag.slice(at + 1)}`;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The compatibility probe (contract §7), run at startup of every command that touches the store.
 * Under `probe/<uuidv7>` it proves: create-if-absent succeeds once and fails the second time;
 * the bytes and ETag read back; a wrong-ETag replace fails and changes nothing; a right-ETag
 * replace succeeds and is read back immediately. On a store that can phrase conditions in
 * more than one way (`conditionForms`: the S3 driver's `If-Match` quoting), it tries each
 * form in order and keeps the first the store honours.
 *
 * A transient failure (a timeout, a reset, a 5xx, throttling, an ambiguous answer to a
 * conditional write) never counts as a wrong answer: the half-known state of that attempt is
 * abandoned and the probe starts over on a fresh key after a backoff, within a bounded number
 * of attempts and time. Each attempt's key is deleted afterwards whenever the store lets us,
 * also after a refusal or an interrupted attempt. A first write refused with `AccessDenied` is
 * no incompatibility: the probe then only reads `current` and answers `read-only` (or
 * `denied`). Never throws for a store failure.
 */
export async function runProbe(
  store: ObjectStore,
  options: ProbeOptions = {},
): Promise<ProbeResult> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const started = now();
  let last = '';
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await probeOnce(store, sleep);
    if (outcome.kind !== 'interrupted') return outcome.result;
    last = outcome.reason;
    if (attempt >= attempts || now() - started >= budgetMs) {
      const tries = attempt === 1 ? '1 attempt' : `${attempt} attempts`;
      return {
        ok: false,
        verdict: 'unreachable',
        reason: `no answer could be trusted in ${tries}; last: ${last}`,
      };
    }
    await sleep(backoffMs(attempt, random));
  }
}

/** Half to all of 200 ms doubling per attempt, at most 2 s. */
function backoffMs(attempt: number, random: () => number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));
  return Math.floor(ceiling * (0.5 + random() / 2));
}

type Attempt = { kind: 'done'; result: ProbeResult } | { kind: 'interrupted'; reason: string };

/** One probe on a fresh key; a transient failure interrupts it. */
async function probeOnce(
  store: ObjectStore,
  sleep: (ms: number) => Promise<void>,
): Promise<Attempt> {
  const key = probeKey(newUuidV7());
  const first = new TextEncoder().encode(`slivingdoc probe ${key} 1`);
  const second = new TextEncoder().encode(`slivingdoc probe ${key} 2`);
  // Any answer but "never reached the store" may leave the key behind (a lost answer to a
  // create that landed), so it is deleted afterwards.
  let mayExist = true;
  let step = 'create-if-absent';
  const onStep = (s: string) => {
    step = s;
  };
  try {
    let denied: unknown;
    const { etag } = await interruptible(
      step,
      store.createIfAbsent(key, first).catch((err: unknown) => {
        // Never sent, or refused: the key cannot exist, and no delete follows.
        if (isStoreError(err, 'unreachable') || isWriteDenied(err)) mayExist = false;
        if (isWriteDenied(err)) denied = err;
        throw err;
      }),
    ).catch(async (err: unknown) => {
      if (denied === undefined) throw err;
      throw new ProbeVerdict(await readAccess(store, describe(step, denied)));
    });
    onStep('second create-if-absent');
    await expectPrecondition(step, store.createIfAbsent(key, second), () =>
      fail('second create-if-absent succeeded: the store ignores If-None-Match'),
    );
    onStep('read back');
    const read = await interruptible(step, store.get(key));
    if (!read || !sameBytes(read.body, first)) fail('read back: bytes differ from the write');
    if (read.etag !== etag) fail('read back: ETag differs from the write');
    await proveReplace(store, key, etag, second, onStep);
    return { kind: 'done', result: { ok: true } };
  } catch (err) {
    if (err instanceof ProbeFailure)
      return { kind: 'done', result: { ok: false, verdict: 'incompatible', reason: err.message } };
    if (err instanceof ProbeInterrupted) return { kind: 'interrupted', reason: err.message };
    if (err instanceof ProbeVerdict) return { kind: 'done', result: err.result };
    const code = isStoreError(err) && err.code !== 'INJECTED' ? err.code : undefined;
    return {
      kind: 'done',
      result: {
        ok: false,
        verdict: 'incompatible',
        reason: describe(step, err),
        ...(code === undefined ? {} : { code }),
      },
    };
  } finally {
    if (mayExist) await deleteProbeKey(store, key, sleep);
  }
}

/**
 * After a write refused with AccessDenied: reads `current` (present or absent) to tell a
 * reader from credentials that may do nothing here. Sends no write.
 */
async function readAccess(store: ObjectStore, refused: string): Promise<ProbeResult> {
  try {
    await interruptible('read current', store.get(CURRENT_KEY));
    return { ok: false, verdict: 'read-only', reason: refused, code: 'AccessDenied' };
  } catch (err) {
    if (err instanceof ProbeInterrupted) throw err;
    const read = describe('read current', err);
    const code = isStoreError(err) && err.code !== 'INJECTED' ? err.code : undefined;
    return {
      ok: false,
      verdict: isStoreError(err, 'access-denied') ? 'denied' : 'incompatible',
      reason: `${refused}; ${read}`,
      ...(code === undefined ? {} : { code }),
    };
  }
}

/** Awaits a store call; a transient failure becomes an interruption of the attempt. */
async function interruptible<T>(step: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (isStoreError(err) && (err as StoreError).transient)
      throw new ProbeInterrupted(describe(step, err));
    throw err;
  }
}

/** A conditional write that must be refused with a precondition failure. */
async function expectPrecondition(
  step: string,
  call: Promise<unknown>,
  onSuccess: () => never,
): Promise<void> {
  try {
    await interruptible(step, call);
  } catch (err) {
    if (isStoreError(err, 'precondition-failed')) return;
    throw err;
  }
  onSuccess();
}

/** Deletes a probe key, retrying transient failures a few times; a failure is not a verdict. */
async function deleteProbeKey(
  store: ObjectStore,
  key: string,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  for (let attempt = 1; attempt <= DELETE_ATTEMPTS; attempt += 1) {
    try {
      await store.deleteMany([key]);
      return;
    } catch (err) {
      if (!isStoreError(err) || !err.transient || attempt === DELETE_ATTEMPTS) return;
      await sleep(FIRST_BACKOFF_MS * attempt);
    }
  }
}

/** Wrong-ETag then right-ETag replace, in each condition form the store offers. */
async function proveReplace(
  store: ObjectStore,
  key: string,
  etag: string,
  body: Uint8Array,
  onStep: (step: string) => void,
): Promise<void> {
  const choice = store.conditionForms;
  const forms: readonly (string | undefined)[] = choice ? choice.candidates() : [undefined];
  for (const form of forms) {
    if (form !== undefined) choice!.use(form);
    onStep('wrong-ETag replace');
    await expectPrecondition(
      'wrong-ETag replace',
      store.replaceIfMatch(key, body, wrongEtag(etag)),
      () => fail('wrong-ETag replace succeeded: the store ignores If-Match'),
    );
    onStep('read after wrong-ETag replace');
    const after = await interruptible('read after wrong-ETag replace', store.get(key));
    if (!after || after.etag !== etag) fail('wrong-ETag replace changed the object');
    onStep('right-ETag replace');
    let replaced: { etag: string };
    try {
      replaced = await interruptible('right-ETag replace', store.replaceIfMatch(key, body, etag));
    } catch (err) {
      if (isStoreError(err, 'precondition-failed')) continue; // try the other form
      throw err;
    }
    onStep('read after replace');
    const read = await interruptible('read after replace', store.get(key));
    if (!read || !sameBytes(read.body, body) || read.etag !== replaced.etag) {
      fail('read after replace: the new bytes are not visible immediately');
    }
    return;
  }
  fail('right-ETag replace refused in every ETag form');
}
