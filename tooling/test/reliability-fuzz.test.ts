import fc from 'fast-check';
import { describe, it } from 'vitest';
import { fuzzParameters } from '../reliability/fuzz/budget';
import { toolArgumentDecoder } from '../reliability/fuzz/mcp-arguments';
import {
  lineDiffStatRules,
  markerScanner,
  textMergeIdentities,
  treeDiffstatRules,
} from '../reliability/fuzz/merge';
import { messageRules, notebookPathRules, requestPathRules } from '../reliability/fuzz/policy';
import { stateDecoder } from '../reliability/fuzz/state';

// Bounded fuzz runs of every decoder and rule set that takes outside input.
// `pnpm fuzz` runs the same properties with SLIVINGDOC_FUZZ_RUNS runs each. A hang shows
// up as this test's timeout; a crash or an uncatalogued rejection as a counterexample.

// Guards against a hang only; the run counts, not the clock, size each test.
const FUZZ_TIMEOUT = 120_000;

describe('fuzz: path rules (@slivingdoc/policy)', () => {
  it(
    'notebook paths: no crash, only catalogued file reasons, accepted paths obey contract §4',
    () => {
      fc.assert(notebookPathRules, fuzzParameters(1500));
    },
    FUZZ_TIMEOUT,
  );
  it(
    'request paths: only PATH_INVALID, accepted paths absolute, clean and stable',
    () => {
      fc.assert(requestPathRules, fuzzParameters(1500));
    },
    FUZZ_TIMEOUT,
  );
  it(
    'commit messages: only MESSAGE_INVALID, accepted messages within the rules',
    () => {
      fc.assert(messageRules, fuzzParameters(1500));
    },
    FUZZ_TIMEOUT,
  );
});

describe('fuzz: marker scanner and diffstat (@slivingdoc/merge)', () => {
  it(
    'marker scanner: total on any bytes, reports only exact, ordered, complete blocks',
    () => {
      fc.assert(markerScanner, fuzzParameters(1500));
    },
    FUZZ_TIMEOUT,
  );
  it(
    'line diffstat: total, consistent, symmetric, CRLF-blind',
    () => {
      fc.assert(lineDiffStatRules, fuzzParameters(1000));
    },
    FUZZ_TIMEOUT,
  );
  it(
    'tree diffstat: exactly the changed files, sorted, agreeing with the line diff',
    async () => {
      await fc.assert(treeDiffstatRules, fuzzParameters(200));
    },
    FUZZ_TIMEOUT,
  );
  it(
    'text merge: total, and a one-sided change merges to that change',
    () => {
      fc.assert(textMergeIdentities, fuzzParameters(800));
    },
    FUZZ_TIMEOUT,
  );
});

describe('fuzz: state.json decoder (@slivingdoc/workspace)', () => {
  it(
    'total on any text, refuses only with StateError, round-trips what it accepts',
    () => {
      fc.assert(stateDecoder, fuzzParameters(1500));
    },
    FUZZ_TIMEOUT,
  );
});

describe('fuzz: tool-argument decoder (@slivingdoc/mcp)', () => {
  it(
    'total on any raw arguments, refuses only with catalogued INVALID_REQUEST reasons',
    () => {
      fc.assert(toolArgumentDecoder, fuzzParameters(2000));
    },
    FUZZ_TIMEOUT,
  );
});
