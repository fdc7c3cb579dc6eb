import { describe, expect, it } from 'vitest';
import { historyContent } from '../src/pages/history';

const publication = (generation: number) => ({
  generation,
  time: 1_700_000_000,
  actor: 'ann',
  message: `publication ${generation}`,
});

const query = { actor: undefined, path: undefined, page: 1 };

describe('/history: the checkpoint boundary', () => {
  it('a new notebook (its first checkpoint is generation 1) claims no compaction', () => {
    const page = historyContent(
      {
        path: '/nb',
        generation: 2,
        publications: [publication(2), publication(1)],
        more: false,
        checkpoints: [1],
      },
      query,
    ).toString();
    expect(page).not.toContain('compacted');
    expect(page).toContain('Checkpoint through generation 1.');
  });

  it('a checkpoint that compacted earlier publications shows the boundary', () => {
    const page = historyContent(
      {
        path: '/nb',
        generation: 6,
        publications: [publication(6), publication(5), publication(4)],
        more: false,
        checkpoints: [4],
      },
      query,
    ).toString();
    expect(page).toContain(
      'Checkpoint boundary: the history before generation 4 was compacted and is no longer retained.',
    );
  });
});
