/**
 * `/proposals` and `/proposals/ID` (docs/view.md, "Proposals"): the agents' queued commits, each
 * with its diff against its base, what approving it would change at the current head, and the
 * Approve and Reject forms of a person's session. Everything an agent wrote (paths, contents,
 * messages, actor names) shows its invisible code points.
 */
import type {
  ApprovalPreview,
  FileDiff,
  FileIssue,
  ListedProposal,
  ProposalRecord,
} from '@slivingdoc/engine';
import { html, type SafeHtml, visible } from '../html';
import { conflictList, fileDiff } from './diff';
import { timeElement } from './layout';

/** An approval a publication's message claims and the proposal's record confirms. */
export interface ConfirmedApproval {
  by: string;
  id: string;
  revision: number;
}

/** "Approved by X" under a publication's author. */
export function approvalNote(approval: ConfirmedApproval | undefined): SafeHtml {
  if (approval === undefined) return html``;
  return html`<p class="approval">Approved by <strong>${visible(approval.by)}</strong> (<a href="/proposals/${approval.id}">proposal ${approval.id}</a>, revision ${approval.revision})</p>`;
}

/** What the Approve and Reject forms need, or why a session has none. */
export type DecisionControl =
  | { kind: 'form'; csrf: string }
  | { kind: 'not-a-person' }
  | { kind: 'read-only-store' };

/** A refused decision shown on the proposal's page. */
export type DecisionOutcome =
  | { kind: 'conflict'; files: FileIssue[] }
  | { kind: 'error'; code: string; reason: string; message: string };

function subject(message: string): string {
  return message.split('\n')[0] ?? '';
}

function seconds(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

function files(count: number): string {
  return `${count} ${count === 1 ? 'file' : 'files'}`;
}

/** A decided proposal's status line. */
function decisionText(record: ProposalRecord, published: number | undefined): SafeHtml {
  const decision = record.decision;
  if (decision === undefined) return html``;
  const when = timeElement(seconds(decision.at));
  if (record.state === 'approved')
    return html`Approved by <strong>${visible(decision.by)}</strong> ${when} (revision ${decision.revision})${published === undefined ? '' : html`, published as <a href="/publications/${published}">generation ${published}</a>`}.`;
  return html`Rejected by <strong>${visible(decision.by)}</strong> ${when} (revision ${decision.revision})${decision.reason === undefined ? '' : html`: <q class="reason">${visible(decision.reason)}</q>`}. Nothing was published.`;
}

function listRow(listed: ListedProposal): SafeHtml {
  if (!('record' in listed))
    return html`<tr><td><a href="/proposals/${listed.id}">${listed.id}</a></td><td>malformed</td><td colspan="4">${listed.malformed}</td></tr>`;
  const { record } = listed;
  return html`<tr>
<td><a href="/proposals/${record.id}">${record.id}</a></td>
<td>${record.state === 'open' ? html`open, revision ${record.revision}` : decisionText(record, undefined)}</td>
<td>${visible(record.actor)}</td>
<td>${visible(subject(record.message))}</td>
<td>${files(record.files.length)}</td>
<td>${timeElement(seconds(record.updatedAt))}</td>
</tr>`;
}

function table(caption: string, rows: ListedProposal[]): SafeHtml {
  return html`<div class="scroll"><table class="history proposals">
<caption>${caption}</caption>
<thead><tr><th scope="col">Proposal</th><th scope="col">Status</th><th scope="col">Actor</th><th scope="col">Message</th><th scope="col">Changes</th><th scope="col">Updated</th></tr></thead>
<tbody>${rows.map(listRow)}</tbody></table></div>`;
}

/** `/proposals`: the open proposals first (oldest first), then the decided ones, newest first. */
export function proposalsContent(proposals: ListedProposal[], settingNote: SafeHtml): SafeHtml {
  const open = proposals.filter((p) => !('record' in p) || p.record.state === 'open');
  const closed = proposals.filter((p) => 'record' in p && p.record.state !== 'open').reverse();
  return html`<h1>Proposals</h1>
<div data-live="proposals">
${settingNote}
${open.length === 0 ? html`<p>No proposal is waiting for a decision.</p>` : table(`Waiting for a decision (${open.length})`, open)}
${closed.length === 0 ? '' : table('Decided (kept 30 days after the decision)', closed)}
</div>`;
}

function decisionForms(record: ProposalRecord, control: DecisionControl): SafeHtml {
  if (record.state !== 'open') return html``;
  if (control.kind === 'not-a-person')
    return html`<p class="meta">Only a person's session approves or rejects: the token <code>slivingdoc view</code> printed, or one made with <code>slivingdoc token add NAME --reviewer</code>.</p>`;
  if (control.kind === 'read-only-store')
    return html`<p class="meta">This server's store credentials can only read: decide with the CLI where they can write.</p>`;
  const hidden = html`<input type="hidden" name="csrf" value="${control.csrf}"><input type="hidden" name="revision" value="${record.revision}">`;
  return html`<section class="decide" aria-labelledby="decide-title">
<h2 id="decide-title">Decide revision ${record.revision}</h2>
<form method="post" action="/proposals/${record.id}/approve">${hidden}
<button type="submit">Approve revision ${record.revision}</button>
<span class="meta">Merges it onto the notebook and publishes it, authored by ${visible(record.actor)} and approved by you.</span>
</form>
<form method="post" action="/proposals/${record.id}/reject" class="reject">${hidden}
<label for="reason">Reason (the agent reads it)</label>
<textarea id="reason" name="reason" required maxlength="2000" rows="3"></textarea>
<button type="submit" class="danger">Reject revision ${record.revision}</button>
</form>
</section>`;
}

function previewSection(
  record: ProposalRecord,
  preview: { generation: number; outcome: ApprovalPreview } | undefined,
): SafeHtml {
  if (record.state !== 'open' || preview === undefined) return html``;
  const { generation, outcome } = preview;
  const body =
    outcome.conflicts.length > 0
      ? html`<div class="alert" role="note"><p><strong>Approving now would conflict with the notebook; it would publish nothing.</strong></p>${conflictList(outcome.conflicts)}</div>`
      : outcome.files.length === 0
        ? html`<p>Approving now would publish nothing: the notebook already holds this change.</p>`
        : outcome.files.map((file, i) => fileDiff(file, `head-${i}`));
  return html`<section aria-labelledby="preview-title" data-live="preview">
<h2 id="preview-title">What approving revision ${record.revision} would change at generation ${generation}</h2>
${body}</section>`;
}

function outcomeSection(outcome: DecisionOutcome | undefined): SafeHtml {
  if (outcome === undefined) return html``;
  if (outcome.kind === 'error')
    return html`<div class="alert" role="alert"><p><strong>${outcome.code} · ${outcome.reason}</strong></p><p>${outcome.message}</p></div>`;
  return html`<div class="alert" role="alert">
<p><strong>The approval conflicts with the notebook; nothing was published and the proposal stays open.</strong></p>
${conflictList(outcome.files)}</div>`;
}

/** What `/proposals/ID` shows. */
export interface ProposalView {
  record: ProposalRecord;
  diffs: FileDiff[];
  /** Open: the approval's outcome at the accepted head, and that head's generation. */
  preview: { generation: number; outcome: ApprovalPreview } | undefined;
  /** Approved: the publication's generation as `log` numbers it, when it is still retained. */
  published: number | undefined;
  control: DecisionControl;
  outcome: DecisionOutcome | undefined;
}

/** `/proposals/ID`: status, message, the diff against its base, the preview, the forms. */
export function proposalContent(view: ProposalView): SafeHtml {
  const { record } = view;
  return html`<h1>Proposal ${record.id}</h1>
${outcomeSection(view.outcome)}
<div data-live="proposal">
<p class="status">${record.state === 'open' ? html`Open, revision ${record.revision}: nothing of it is published until a person approves it.` : decisionText(record, view.published)}</p>
<dl class="facts">
<dt>Actor</dt><dd>${visible(record.actor)}</dd>
<dt>Base</dt><dd>generation ${record.baseGeneration}</dd>
<dt>Created</dt><dd>${timeElement(seconds(record.createdAt))}</dd>
<dt>Updated</dt><dd>${timeElement(seconds(record.updatedAt))}</dd>
</dl>
<pre class="message">${visible(record.message)}</pre>
<h2>Revision ${record.revision} against its base (generation ${record.baseGeneration})</h2>
${view.diffs.length === 0 ? html`<p>No file changed.</p>` : view.diffs.map((file, i) => fileDiff(file, `base-${i}`))}
${decisionForms(record, view.control)}
</div>
${previewSection(record, view.preview)}`;
}
