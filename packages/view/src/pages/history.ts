import type { HistoryPage, PublicationRecord } from '@slivingdoc/engine';
import { html, type SafeHtml, visible } from '../html';
import { timeElement } from './layout';
import type { ConfirmedApproval } from './proposals';

/** Publications per history page. */
export const HISTORY_PAGE_SIZE = 50;

/** What `/history` was asked for. */
export interface HistoryQuery {
  actor: string | undefined;
  path: string | undefined;
  page: number;
}

function subject(message: string): string {
  return message.split('\n')[0] ?? '';
}

function approvedBy(approval: ConfirmedApproval | undefined): SafeHtml {
  return approval === undefined
    ? html``
    : html` <span class="meta approval">approved by ${visible(approval.by)}</span>`;
}

function diffstat(publication: PublicationRecord): SafeHtml {
  const files = publication.files;
  if (files === undefined) return html`<span class="meta">changes not retained</span>`;
  const insertions = files.reduce((sum, file) => sum + file.insertions, 0);
  const deletions = files.reduce((sum, file) => sum + file.deletions, 0);
  return html`${files.length} ${files.length === 1 ? 'file' : 'files'}
<span class="ins" aria-label="${insertions} insertions">+${insertions}</span>
<span class="del" aria-label="${deletions} deletions">−${deletions}</span>`;
}

function queryString(query: HistoryQuery, page: number): string {
  const params = new URLSearchParams();
  if (query.actor !== undefined) params.set('actor', query.actor);
  if (query.path !== undefined) params.set('path', query.path);
  if (page > 1) params.set('page', String(page));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** `/history`: filters, the page of publications newest first, the checkpoint boundary, paging. */
export function historyContent(
  history: HistoryPage,
  query: HistoryQuery,
  approval: (message: string) => ConfirmedApproval | undefined = () => undefined,
): SafeHtml {
  // The oldest retained checkpoint is the boundary: nothing before its head is retained. A
  // checkpoint through generation 1 (a new notebook's first publication) compacted nothing.
  const oldest = Math.min(...history.checkpoints);
  const compacted = oldest > 1;
  const checkpoints = new Set(history.checkpoints);
  const rows = history.publications.map((publication) => {
    const boundary =
      publication.generation === oldest && compacted
        ? html`<tr class="boundary"><td colspan="5">Checkpoint boundary: the history before generation ${publication.generation} was compacted and is no longer retained.</td></tr>`
        : checkpoints.has(publication.generation)
          ? html`<tr class="boundary"><td colspan="5">Checkpoint through generation ${publication.generation}.</td></tr>`
          : '';
    return html`<tr>
<td><a href="/publications/${publication.generation}">${publication.generation}</a></td>
<td>${timeElement(publication.time)}</td>
<td>${publication.actor}</td>
<td>${subject(publication.message)}${approvedBy(approval(publication.message))}</td>
<td class="stat">${diffstat(publication)}</td>
</tr>${boundary}`;
  });
  const pager = html`<nav class="pager" aria-label="Pages of the history">
${query.page > 1 ? html`<a href="/history${queryString(query, query.page - 1)}" rel="prev">Newer</a>` : ''}
${history.more ? html`<a href="/history${queryString(query, query.page + 1)}" rel="next">Older</a>` : ''}
</nav>`;
  return html`<h1>History</h1>
<form class="filters" method="get" action="/history" role="search" aria-label="Filter the history">
<label>Actor <input type="text" name="actor" value="${query.actor ?? ''}" autocomplete="off"></label>
<label>Path (file or folder) <input type="text" name="path" value="${query.path ?? ''}" autocomplete="off"></label>
<button type="submit">Filter</button>
${query.actor !== undefined || query.path !== undefined ? html`<a href="/history">Clear filters</a>` : ''}
</form>
<div data-live="history">
<p class="meta">Page ${query.page}${query.actor === undefined ? '' : html` · actor ${query.actor}`}${query.path === undefined ? '' : html` · path ${query.path}`}</p>
${
  history.publications.length === 0
    ? html`<p>No publication matches.</p>`
    : html`<div class="scroll"><table class="history">
<caption class="visually-hidden">Publications, newest first</caption>
<thead><tr><th scope="col">Generation</th><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Message</th><th scope="col">Changes</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${pager}
</div>`;
}
