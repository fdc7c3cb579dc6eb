/**
 * The view's one diff rendering: a file's unified hunks as a table with old and new line
 * numbers (publications, proposals, and what an approval would change), and the list of files
 * and line ranges a refused merge names. Paths and lines show their invisible code points.
 */
import type { FileDiff, FileIssue } from '@slivingdoc/engine';
import { html, pathUrl, type SafeHtml, visible } from '../html';

/** One file's diff; `id` makes its heading's anchor unique on the page. */
export function fileDiff(file: FileDiff, id: string): SafeHtml {
  const heading = `file-${id}`;
  const title = html`<h3 id="${heading}">${visible(file.path)} <span class="meta">(${file.change},
<span class="ins">+${file.insertions}</span> <span class="del">−${file.deletions}</span>)</span></h3>`;
  if (file.binary)
    return html`<section class="file" aria-labelledby="${heading}">${title}<p>Binary file: not shown.</p></section>`;
  const rows = file.hunks.map(
    (
      hunk,
    ) => html`<tr class="hunk"><td class="ln"></td><td class="ln"></td><td class="text">@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@</td></tr>
${hunk.lines.map(
  (line) =>
    html`<tr class="${line.kind}"><td class="ln">${line.oldNumber ?? ''}</td><td class="ln">${line.newNumber ?? ''}</td><td class="text"><span class="visually-hidden">${line.kind === 'added' ? 'added: ' : line.kind === 'removed' ? 'removed: ' : ''}</span>${line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' '}${visible(line.text)}</td></tr>`,
)}`,
  );
  return html`<section class="file" aria-labelledby="${heading}">${title}
<div class="scroll"><table class="diff"><caption class="visually-hidden">Changes to ${visible(file.path)}: old and new line numbers, then the line</caption>
<tbody>${rows}</tbody></table></div></section>`;
}

/** The files a refused merge names, each with its reason and line ranges. */
export function conflictList(files: FileIssue[]): SafeHtml {
  return html`<ul>${files.map(
    (file) =>
      html`<li><a href="${pathUrl('/files', file.path)}">${visible(file.path)}</a>: ${file.reason}${file.ranges.length === 0 ? '' : html`, lines ${file.ranges.map((range) => `${range.start}–${range.end}`).join(', ')}`}</li>`,
  )}</ul>`;
}
