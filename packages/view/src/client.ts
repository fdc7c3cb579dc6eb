/// <reference lib="dom" />
/**
 * The only script a page loads (`/assets/view.js`, same origin: the CSP allows no inline
 * script). Written as a typed function and served as its source text, so it is type-checked
 * and linted with the rest. It shows times in the browser's zone (UTC on hover) and keeps the
 * page live: it polls `/api/generation` with the ETag of what it shows (the generation and the
 * proposals' version; a 304 costs nothing) and, when either moved on, refetches the page and
 * swaps only its live regions
 * (`data-live`), keeping the scroll position and focus, so a file being read stays in place.
 */
function viewClient(): void {
  const POLL_MS = 1000;

  function localTimes(root: ParentNode): void {
    for (const node of Array.from(root.querySelectorAll('time[datetime]'))) {
      const when = new Date(node.getAttribute('datetime') ?? '');
      if (Number.isNaN(when.getTime())) continue;
      node.textContent = when.toLocaleString(undefined, {
        dateStyle: 'medium',
        timeStyle: 'medium',
      });
      node.setAttribute('title', `${when.toISOString().slice(0, 19).replace('T', ' ')} UTC`);
    }
  }

  const body = document.body;
  let shown = body.dataset.version ?? '';
  const status = document.getElementById('live-status');

  async function refresh(version: string, generation: string): Promise<void> {
    const response = await fetch(window.location.href, {
      credentials: 'same-origin',
      cache: 'no-store',
    });
    if (!response.ok) return;
    const next = new DOMParser().parseFromString(await response.text(), 'text/html');
    const x = window.scrollX;
    const y = window.scrollY;
    for (const region of Array.from(document.querySelectorAll<HTMLElement>('[data-live]'))) {
      const replacement = next.querySelector(`[data-live="${region.dataset.live}"]`);
      if (replacement === null || region.contains(document.activeElement)) continue;
      region.replaceWith(document.importNode(replacement, true));
    }
    localTimes(document);
    window.scrollTo(x, y);
    shown = version;
    body.dataset.version = version;
    const moved = generation !== body.dataset.generation;
    body.dataset.generation = generation;
    if (status !== null)
      status.textContent = moved ? `Updated to generation ${generation}.` : 'Proposals updated.';
  }

  async function poll(): Promise<void> {
    try {
      const response = await fetch('/api/generation', {
        credentials: 'same-origin',
        cache: 'no-store',
        headers: { 'If-None-Match': `"${shown}"` },
      });
      if (response.status === 200) {
        const answer = (await response.json()) as { generation: number; version: string };
        if (answer.version !== shown) await refresh(answer.version, String(answer.generation));
      }
    } catch {
      // Offline or the server stopped: try again at the next tick.
    }
    window.setTimeout(poll, POLL_MS);
  }

  localTimes(document);
  if (body.dataset.live === 'on') window.setTimeout(poll, POLL_MS);
}

/** The script's text. */
export const CLIENT_JS = `"use strict";(${viewClient.toString()})();\n`;

/**
 * The stylesheet: system fonts, a dark scheme following the system's, readable from 360 px
 * (the tree folds above the file pane) to wide screens (side by side).
 */
export const VIEW_CSS = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --accent: #0550ae; --add: #dafbe1; --del: #ffebe9; --add-fg: #116329; --del-fg: #82071e;
  --code: #f6f8fa; --warn: #fff8c5; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --accent: #79c0ff;
    --add: #12361f; --del: #3c1618; --add-fg: #7ee787; --del-fg: #ffa198; --code: #161b22;
    --warn: #3b2e00; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, textarea:focus-visible, summary:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: baseline;
  padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; }
header.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header.top nav a[aria-current="page"] { font-weight: 700; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: .5rem; background: var(--bg); padding: .25rem .5rem; }
main { padding: 1rem; max-width: 100rem; margin: 0 auto; }
footer { padding: .5rem 1rem; color: var(--muted); border-top: 1px solid var(--line); font-size: .9rem; }
.layout { display: grid; gap: 1rem; grid-template-columns: 1fr; }
@media (min-width: 56rem) { .layout { grid-template-columns: minmax(14rem, 22rem) 1fr; } }
.tree ul { list-style: none; padding-left: 1rem; margin: 0; }
.tree > ul { padding-left: 0; }
.tree li { overflow-wrap: anywhere; }
.tree a[aria-current="page"] { font-weight: 700; }
.pane { min-width: 0; }
.meta { color: var(--muted); font-size: .9rem; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
pre { background: var(--code); padding: .75rem; overflow-x: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.markdown { overflow-wrap: anywhere; }
.markdown table { border-collapse: collapse; }
.markdown th, .markdown td { border: 1px solid var(--line); padding: .25rem .5rem; }
.markdown .href, .markdown .image code { color: var(--muted); }
.scroll { overflow-x: auto; }
table.lines, table.diff, table.blame, table.history { border-collapse: collapse; width: 100%; }
th { text-align: left; padding: .25rem .5rem; }
table.lines td, table.diff td, table.blame td { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .85rem; padding: 0 .5rem; vertical-align: top; white-space: pre-wrap; overflow-wrap: anywhere; }
td.ln { color: var(--muted); text-align: right; user-select: none; width: 1%; white-space: nowrap; }
tr.added td { background: var(--add); }
tr.added td.text { color: var(--add-fg); }
tr.removed td { background: var(--del); }
tr.removed td.text { color: var(--del-fg); }
tr.hunk td { color: var(--muted); background: var(--code); }
table.history th, table.history td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
table.history td.stat { white-space: nowrap; }
.ins { color: var(--add-fg); } .del { color: var(--del-fg); }
tr.boundary td { background: var(--warn); font-style: italic; }
table.blame td.who { font-family: system-ui, sans-serif; white-space: nowrap; width: 1%; }
table.blame tr.first td { border-top: 1px solid var(--line); }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .9rem; }
input[type="text"] { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); background: var(--bg);
  color: var(--fg); border-radius: 4px; min-width: 12rem; }
button { font: inherit; padding: .4rem .9rem; border-radius: 4px; border: 1px solid var(--line);
  background: var(--code); color: var(--fg); cursor: pointer; }
button.danger { border-color: var(--del-fg); color: var(--del-fg); }
.alert { border: 1px solid var(--line); border-left: 4px solid var(--del-fg); padding: .75rem 1rem; margin: 1rem 0; }
.alert.ok { border-left-color: var(--add-fg); }
.file { margin: 1.5rem 0; border: 1px solid var(--line); border-radius: 6px; }
.file h3 { margin: 0; padding: .5rem .75rem; font-size: 1rem; border-bottom: 1px solid var(--line);
  overflow-wrap: anywhere; }
.member { margin-top: 2rem; }
.pager { display: flex; gap: 1rem; margin-top: 1rem; }
.invisible { color: var(--del-fg); background: var(--warn); border-radius: 3px; padding: 0 .1rem;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; }
.count { color: var(--muted); font-weight: 400; }
.approval { margin: .25rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; overflow-wrap: anywhere; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
section.decide form { margin: 1rem 0; display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
section.decide form.reject { flex-direction: column; align-items: flex-start; }
textarea { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); background: var(--bg);
  color: var(--fg); border-radius: 4px; width: min(40rem, 100%); }
table.proposals td { overflow-wrap: anywhere; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
`;
