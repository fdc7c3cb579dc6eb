import type { BlameResult, LineOrigin } from '@slivingdoc/engine';
import { html, pathUrl, type SafeHtml } from '../html';
import { timeElement } from './layout';

function sameOrigin(a: LineOrigin, b: LineOrigin | undefined): boolean {
  if (b === undefined) return false;
  if ('before' in a || 'before' in b)
    return 'before' in a && 'before' in b && a.before === b.before;
  return a.generation === b.generation && a.actor === b.actor && a.time === b.time;
}

function who(origin: LineOrigin): SafeHtml {
  if ('before' in origin) return html`before generation ${origin.before}`;
  return html`<a href="/publications/${origin.generation}" title="${origin.message.split('\n')[0] ?? ''}">generation ${origin.generation}</a>
${origin.actor} · ${timeElement(origin.time)}`;
}

/** `/blame/<path>`: every line with the publication that last changed it. */
export function blameContent(blame: BlameResult): SafeHtml {
  return html`<h1>Blame: ${blame.file}</h1>
<p class="meta">At generation ${blame.generation} · <a href="${pathUrl('/files', blame.file)}">View file</a> ·
Lines marked "before generation N" are older than the retained history.</p>
<div class="scroll" data-live="blame"><table class="blame"><caption class="visually-hidden">Each line of ${blame.file} with the publication that last changed it</caption>
<thead><tr><th scope="col">Publication</th><th scope="col">Line</th><th scope="col">Text</th></tr></thead>
<tbody>${blame.lines.map((line, i) => {
    const first = !sameOrigin(line.origin, blame.lines[i - 1]?.origin);
    return html`<tr${first ? html` class="first"` : ''}><td class="who">${first ? who(line.origin) : ''}</td><td class="ln">${line.number}</td><td class="text">${line.text}</td></tr>`;
  })}</tbody></table></div>`;
}
