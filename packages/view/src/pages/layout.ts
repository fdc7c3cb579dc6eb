import { html, type SafeHtml } from '../html';

/** What every page has around its content. */
export interface PageFrame {
  title: string;
  /** Which top navigation entry is the current page. */
  section: 'files' | 'history' | 'proposals' | 'other';
  /** The accepted generation the page shows. */
  generation: number;
  /**
   * What the page shows, as `/api/generation`'s ETag names it (the live script compares
   * against it): the generation and the proposals' version.
   */
  version: string;
  /** Open proposals (undefined: they could not be read). */
  pending: number | undefined;
  /** Whether the page updates itself when the notebook moves on. */
  live: boolean;
  content: SafeHtml;
}

/** A time as a `<time>` element: UTC in the markup, the browser's zone after the script ran. */
export function timeElement(seconds: number): SafeHtml {
  const iso = new Date(seconds * 1000).toISOString();
  const utc = `${iso.slice(0, 19).replace('T', ' ')} UTC`;
  return html`<time datetime="${iso}" title="${utc}">${utc}</time>`;
}

function pendingLabel(pending: number | undefined): string {
  return pending === undefined ? '(?)' : `(${pending} pending)`;
}

/** The whole document. */
export function page(frame: PageFrame): string {
  const nav = (href: string, label: string, section: PageFrame['section']) =>
    html`<li><a href="${href}"${frame.section === section ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${frame.title} · slivingdoc</title>
<link rel="stylesheet" href="/assets/view.css">
<script src="/assets/view.js" defer></script>
</head>
<body data-generation="${frame.generation}" data-version="${frame.version}" data-live="${frame.live ? 'on' : 'off'}">
<a class="skip" href="#content">Skip to content</a>
<header class="top">
<span class="brand">slivingdoc</span>
<nav aria-label="Main"><ul>${nav('/', 'Files', 'files')}${nav('/history', 'History', 'history')}<li><a href="/proposals"${frame.section === 'proposals' ? html` aria-current="page"` : ''}>Proposals <span class="count" data-live="pending">${pendingLabel(frame.pending)}</span></a></li></ul></nav>
</header>
<main id="content">
${frame.content}
</main>
<footer>
<span data-live="footer">Accepted generation ${frame.generation}.</span>
<span id="live-status" role="status" aria-live="polite"></span>
</footer>
</body>
</html>`}\n`;
}
