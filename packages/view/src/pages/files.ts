import type { NotebookFile } from '@slivingdoc/engine';
import { html, pathUrl, type SafeHtml } from '../html';
import { renderMarkdown } from '../markdown';

/** A folder of the tree: its files and subfolders by name. */
interface Folder {
  files: string[];
  folders: Map<string, Folder>;
}

function buildTree(paths: string[]): Folder {
  const root: Folder = { files: [], folders: new Map() };
  for (const path of paths) {
    const parts = path.split('/');
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      let next = folder.folders.get(part);
      if (next === undefined) {
        next = { files: [], folders: new Map() };
        folder.folders.set(part, next);
      }
      folder = next;
    }
    folder.files.push(path);
  }
  return root;
}

function atQuery(at: number | undefined): string {
  return at === undefined ? '' : `?at=${at}`;
}

function renderFolder(
  folder: Folder,
  selected: string | undefined,
  at: number | undefined,
): SafeHtml {
  return html`<ul>${[...folder.folders.entries()].map(
    ([name, sub]) =>
      html`<li><span aria-hidden="true">▸ </span>${name}/${renderFolder(sub, selected, at)}</li>`,
  )}${folder.files.map((path) => {
    const name = path.split('/').at(-1) ?? path;
    const current = path === selected ? html` aria-current="page"` : '';
    return html`<li><a href="${pathUrl('/files', path)}${atQuery(at)}"${current}>${name}</a></li>`;
  })}</ul>`;
}

/** The tree of the notebook's files at one generation. */
export function treeNav(
  files: string[],
  selected: string | undefined,
  at: number | undefined,
): SafeHtml {
  return html`<nav class="tree" aria-label="Notebook files" data-live="tree">
<h2>Files${at === undefined ? '' : html` at generation ${at}`}</h2>
${files.length === 0 ? html`<p>The notebook holds no files yet.</p>` : renderFolder(buildTree(files), selected, at)}
</nav>`;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Text split into lines without terminators (a final newline adds no empty line). */
export function linesOf(text: string): string[] {
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The file pane: Markdown rendered, other text with line numbers, binary named as such. */
export function filePane(file: NotebookFile, at: number | undefined): SafeHtml {
  const text = textOf(file.content);
  const links = html`<p class="meta">Generation ${file.generation} ·
<a href="${pathUrl('/blame', file.file)}${atQuery(at)}">Blame</a> ·
<a href="/history?path=${encodeURIComponent(file.file)}">History of this file</a></p>`;
  let body: SafeHtml;
  if (text === undefined) {
    body = html`<p>Binary file, ${file.content.byteLength} bytes: not shown.</p>`;
  } else if (/\.(md|markdown)$/i.test(file.file)) {
    body = html`<article class="markdown">${renderMarkdown(text)}</article>`;
  } else {
    body = html`<div class="scroll"><table class="lines"><caption class="visually-hidden">${file.file} with line numbers</caption><tbody>${linesOf(
      text,
    ).map(
      (line, i) => html`<tr><td class="ln">${i + 1}</td><td class="text">${line}</td></tr>`,
    )}</tbody></table></div>`;
  }
  return html`<section class="pane" aria-labelledby="file-title" data-live="pane">
<h1 id="file-title">${file.file}</h1>
${links}
${body}
</section>`;
}

/** The pane of `/` when no file is chosen. */
export function emptyPane(files: string[]): SafeHtml {
  return html`<section class="pane" data-live="pane"><h1 id="file-title">Notebook</h1>
<p>${files.length === 0 ? 'Nothing published yet.' : 'Choose a file from the tree.'}</p></section>`;
}
