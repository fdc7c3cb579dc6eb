/**
 * Markdown from the notebook (untrusted: agents wrote it) to HTML that cannot run script or
 * fetch anything by itself. Two layers: markdown-it with raw HTML off (tags in the source are
 * shown as text) renders; sanitize-html then keeps only an allowlist of elements and
 * attributes and http(s)/mailto/relative URLs, so a renderer bug cannot reintroduce script,
 * event handlers, `javascript:`/`data:` URLs, SVG, frames or styles. Images are never
 * fetched: they become text naming their address. A link shows its real target beside its text.
 */
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml, SafeHtml } from './html';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

// An image is shown as its alt text and address; the browser never requests it.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx];
  const src = token?.attrGet('src') ?? '';
  const alt = token?.children?.map((child) => child.content).join('') ?? '';
  return `<span class="image">image: ${escapeHtml(alt)} <code>${escapeHtml(String(src))}</code></span>`;
};

// After a link's text, its real target: "[https://a.example](https://b.example)" shows both.
md.renderer.rules.link_close = (tokens, idx, options, _env, self) => {
  let open = idx - 1;
  while (open >= 0 && tokens[open]?.type !== 'link_open') open -= 1;
  const href = tokens[open]?.attrGet('href') ?? '';
  return `${self.renderToken(tokens, idx, options)}<span class="href"> (${escapeHtml(String(href))})</span>`;
};

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'p',
    'br',
    'hr',
    'blockquote',
    'pre',
    'code',
    'em',
    'strong',
    's',
    'del',
    'ul',
    'ol',
    'li',
    'a',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'span',
  ],
  // No style attribute at all (markdown-it's table alignment included): the CSP forbids inline
  // styles, and a kept one would only produce a violation report.
  allowedAttributes: { a: ['href', 'title'], span: ['class'], ol: ['start'] },
  allowedClasses: { span: ['image', 'href'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (tagName, attribs) => ({
      tagName,
      attribs: { ...attribs, rel: 'noopener noreferrer nofollow', referrerpolicy: 'no-referrer' },
    }),
  },
};
// The transform adds rel and referrerpolicy after the attribute filter ran; allow them explicitly.
(SANITIZE.allowedAttributes as Record<string, string[]>).a?.push('rel', 'referrerpolicy');

/** Renders untrusted Markdown to sanitised HTML. */
export function renderMarkdown(source: string): SafeHtml {
  return new SafeHtml(sanitizeHtml(md.render(source), SANITIZE));
}
