import { type ProposalRecord, previewApproval, proposalDiffs } from '@slivingdoc/engine';
import { describe, expect, it } from 'vitest';
import { html } from '../src/html';
import { proposalContent, proposalsContent } from '../src/pages/proposals';

const bytes = (text: string) => new TextEncoder().encode(text);

function record(overrides: Partial<ProposalRecord> = {}): ProposalRecord {
  return {
    version: 1,
    id: '0123456789abcdef-1',
    directory: 'd',
    actor: 'bot\u200b',
    revision: 2,
    state: 'open',
    baseGeneration: '3',
    message: 'edit\u202e <script>alert(1)</script>',
    files: [
      {
        path: 'a\u2066b.md',
        base: bytes('one\ntwo\n'),
        content: bytes('one\n<img src=x onerror=alert(1)>\u200b\n'),
      },
    ],
    createdAt: '2026-12-04T10:00:00.000Z',
    updatedAt: '2026-12-04T10:05:00.000Z',
    ...overrides,
  };
}

const head = (files: Record<string, string>) => ({
  paths: Object.keys(files),
  read: async (path: string) => bytes(files[path]!),
});

describe('/proposals/ID', () => {
  it('shows hidden characters as markers and escapes everything the agent wrote', async () => {
    const open = record();
    const preview = await previewApproval(open, head({ 'a\u2066b.md': 'one\ntwo\n' }));
    const page = proposalContent({
      record: open,
      diffs: proposalDiffs(open),
      preview: { generation: 5, outcome: preview },
      published: undefined,
      control: { kind: 'form', csrf: 'c' },
      outcome: undefined,
    }).toString();
    for (const marker of ['⟨U+200B⟩', '⟨U+202E⟩', '⟨U+2066⟩']) expect(page).toContain(marker);
    expect(page).not.toMatch(/[\u200b\u202e\u2066]/);
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;script&gt;');
    // The forms send the revision the page shows.
    expect(page).toContain('name="revision" value="2"');
    expect(page).toContain('Approve revision 2');
    expect(page).toContain('What approving revision 2 would change at generation 5');
  });

  it('names the conflict approving would meet at the head, and offers no form to an agent', async () => {
    const open = record();
    const preview = await previewApproval(open, head({ 'a\u2066b.md': 'one\nTWO by someone\n' }));
    expect(preview.conflicts).toEqual([
      { path: 'a\u2066b.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 2, end: 6 }] },
    ]);
    const page = proposalContent({
      record: open,
      diffs: proposalDiffs(open),
      preview: { generation: 6, outcome: preview },
      published: undefined,
      control: { kind: 'not-a-person' },
      outcome: undefined,
    }).toString();
    expect(page).toContain('Approving now would conflict');
    expect(page).toContain('TEXT_CONFLICT, lines 2–6');
    expect(page).not.toContain('<form');
    expect(page).toContain("Only a person's session approves or rejects");
  });

  it('shows who decided a closed proposal', () => {
    const approved = record({
      state: 'approved',
      decision: { by: 'ann', at: '2026-12-04T11:00:00.000Z', revision: 2, generation: '9' },
    });
    const page = proposalContent({
      record: approved,
      diffs: proposalDiffs(approved),
      preview: undefined,
      published: 7,
      control: { kind: 'form', csrf: 'c' },
      outcome: undefined,
    }).toString();
    expect(page).toContain('Approved by <strong>ann</strong>');
    expect(page).toContain('<a href="/publications/7">generation 7</a>');
    expect(page).not.toContain('<form');
    const rejected = record({
      state: 'rejected',
      decision: { by: 'ann', at: '2026-12-04T11:00:00.000Z', revision: 2, reason: 'no\u200b' },
    });
    const list = proposalsContent(
      [
        { id: rejected.id, record: rejected },
        { id: 'ffffffffffffffff-1', malformed: 'bad' },
      ],
      html``,
    ).toString();
    expect(list).toContain('Rejected by <strong>ann</strong>');
    expect(list).toContain('no<span class="invisible"');
    expect(list).toContain('malformed');
  });
});
