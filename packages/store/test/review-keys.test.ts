import { describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  isConditionalKey,
  isDeletableKey,
  isPackKey,
  isProposalId,
  keyKind,
  PROPOSALS_NAMESPACE,
  proposalKey,
  REVIEW_KEY,
} from '../src';

describe('the review keys (docs/review.md)', () => {
  it('review and proposals/<id> are conditional keys; only proposals may be deleted', () => {
    expect(keyKind(REVIEW_KEY)).toBe('review');
    expect(keyKind(proposalKey('0123456789abcdef-12'))).toBe('proposal');
    for (const key of [REVIEW_KEY, proposalKey('0123456789abcdef-1')]) {
      expect(isConditionalKey(key)).toBe(true);
      expect(isPackKey(key)).toBe(false);
    }
    expect(isDeletableKey(REVIEW_KEY)).toBe(false);
    expect(isDeletableKey(proposalKey('0123456789abcdef-1'))).toBe(true);
  });

  it('ids outside the grammar are no keys', () => {
    for (const id of ['', '0123456789abcdef', '0123456789ABCDEF-1', '0123456789abcdef-0', '../x-1'])
      expect([id, isProposalId(id), keyKind(`proposals/${id}`)]).toEqual([id, false, undefined]);
  });

  it('list enumerates the proposals namespace apart from the packs', async () => {
    const store = createMemoryStore({ prefix: 'nb' });
    await store.createIfAbsent(proposalKey('0123456789abcdef-1'), new Uint8Array([1]));
    await store.createIfAbsent(REVIEW_KEY, new Uint8Array([2]));
    expect(await store.list(PROPOSALS_NAMESPACE)).toEqual([
      { key: 'proposals/0123456789abcdef-1', size: 1 },
    ]);
    expect(await store.list('packs/')).toEqual([]);
    await expect(store.deleteMany([REVIEW_KEY])).rejects.toThrow(TypeError);
    await store.deleteMany([proposalKey('0123456789abcdef-1')]);
    expect(await store.list(PROPOSALS_NAMESPACE)).toEqual([]);
  });
});
