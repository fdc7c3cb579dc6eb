import { decodeState, encodeState, StateError } from '@slivingdoc/workspace';
import fc from 'fast-check';
import { edgyString } from './text';

const hex40 = fc.string({
  unit: fc.constantFrom(...'0123456789abcdef'),
  minLength: 40,
  maxLength: 40,
});

/** A valid state.json text, built field by field (generation up to 2^64 − 1). */
const validState = fc
  .record({
    identity: fc.oneof(edgyString, fc.constant('embedded /store slivingdoc')),
    remoteGeneration: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
    baselineHead: hex40,
    baselineTree: hex40,
    recoveryRequired: fc.boolean(),
  })
  .map(
    (s) =>
      `{"version":1,"identity":${JSON.stringify(s.identity)},"remoteGeneration":${s.remoteGeneration},"baselineHead":"${s.baselineHead}","baselineTree":"${s.baselineTree}","recoveryRequired":${s.recoveryRequired}}`,
  );

/** A valid text with one edit: a byte range replaced by an edge piece, cut, or duplicated. */
const mutatedState = fc
  .tuple(validState, fc.nat(), fc.nat(), edgyString)
  .map(([text, a, b, piece]) => {
    const [from, to] = [a % (text.length + 1), b % (text.length + 1)].sort((x, y) => x - y) as [
      number,
      number,
    ];
    return text.slice(0, from) + piece + text.slice(to);
  });

/**
 * state.json decoder (contract §10): total on any text; a refusal is always a typed
 * `StateError` (which the engine repairs, never reports as PRIVATE_STATE_UNAVAILABLE); an
 * accepted record re-encodes to a text that decodes to the same record.
 */
export const stateDecoder = fc.property(fc.oneof(validState, mutatedState, edgyString), (text) => {
  let decoded: ReturnType<typeof decodeState>;
  try {
    decoded = decodeState(text);
  } catch (err) {
    if (err instanceof StateError) return;
    throw err;
  }
  const again = decodeState(encodeState(decoded));
  if (
    JSON.stringify(again, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)) !==
    JSON.stringify(decoded, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))
  ) {
    throw new Error('decode ∘ encode is not the identity');
  }
});
