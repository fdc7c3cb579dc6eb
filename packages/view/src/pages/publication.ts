import type { FileIssue, PublicationResult } from '@slivingdoc/engine';
import { html, type SafeHtml } from '../html';
import { conflictList, fileDiff } from './diff';
import { timeElement } from './layout';
import { approvalNote, type ConfirmedApproval } from './proposals';

/** What the revert form needs: the session's CSRF token, or why there is no form. */
export type RevertControl =
  | { kind: 'form'; csrf: string }
  | { kind: 'read-only' }
  | { kind: 'under-review' }
  | { kind: 'not-revertible' };

/** A revert's outcome shown on the page. */
export type RevertOutcome =
  | { kind: 'conflict'; files: FileIssue[] }
  | { kind: 'error'; code: string; reason: string; message: string };

function revertSection(publication: PublicationResult, control: RevertControl): SafeHtml {
  if (control.kind === 'read-only') return html``;
  if (control.kind === 'under-review')
    return html`<p class="meta">The notebook is under review: only a person's session may revert (an agent's revert would bypass the queue).</p>`;
  if (control.kind === 'not-revertible' || !publication.revertible)
    return html`<p class="meta">This publication cannot be reverted: the state before it is no longer retained.</p>`;
  return html`<form method="post" action="/publications/${publication.generation}/revert">
<input type="hidden" name="csrf" value="${control.csrf}">
<button type="submit" class="danger">Revert generation ${publication.generation}</button>
<span class="meta">Publishes its inverse as a new commit under your name; later work is kept.</span>
</form>`;
}

function outcomeSection(outcome: RevertOutcome | undefined): SafeHtml {
  if (outcome === undefined) return html``;
  if (outcome.kind === 'error')
    return html`<div class="alert" role="alert"><p><strong>${outcome.code} · ${outcome.reason}</strong></p><p>${outcome.message}</p></div>`;
  return html`<div class="alert" role="alert">
<p><strong>The revert conflicts with later publications; nothing was published.</strong></p>
${conflictList(outcome.files)}</div>`;
}

/** `/publications/N`: the whole message, actor, time and per-file diffs of each member. */
export function publicationContent(
  publication: PublicationResult,
  control: RevertControl,
  outcome: RevertOutcome | undefined,
  revertedFrom: number | undefined,
  approval: (message: string) => ConfirmedApproval | undefined = () => undefined,
): SafeHtml {
  const group = publication.members.length > 1;
  return html`<h1>Generation ${publication.generation}</h1>
${revertedFrom === undefined ? '' : html`<div class="alert ok" role="status">Published as the revert of <a href="/publications/${revertedFrom}">generation ${revertedFrom}</a>.</div>`}
${outcomeSection(outcome)}
${group ? html`<p>A group publication of ${publication.members.length} commits, oldest first.</p>` : ''}
${publication.members.map(
  (member, m) => html`<article class="member" aria-labelledby="member-${m}">
<h2 id="member-${m}">${group ? `Commit ${m + 1}: ` : ''}${member.actor}</h2>
<p class="meta">${timeElement(member.time)}</p>
${approvalNote(approval(member.message))}
<pre class="message">${member.message}</pre>
${
  member.files === undefined
    ? html`<p class="meta">Its changes are no longer retained (a checkpoint boundary).</p>`
    : member.files.length === 0
      ? html`<p class="meta">No file changed.</p>`
      : member.files.map((file, f) => fileDiff(file, `${m}-${f}`))
}
</article>`,
)}
${revertSection(publication, control)}`;
}
