/**
 * HTML built by tagged templates: every interpolated value is escaped unless it is already
 * {@link SafeHtml} (made by this module or by the Markdown sanitiser). Hand-written because it
 * is 30 lines and a template engine would add a dependency for the same escaping.
 */
import { visibleSegments } from '@slivingdoc/envelope';

/** A fragment of HTML that is safe to insert as is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text escaped for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Value = SafeHtml | string | number | undefined | null | false | Value[];

function render(value: Value): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<p>${text}</p>\``: interpolations escaped, arrays joined, false/undefined dropped. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] as string;
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] as string);
  });
  return new SafeHtml(out);
}

/** A notebook path as a URL path (each segment percent-encoded). */
export function pathUrl(prefix: string, path: string): string {
  return `${prefix}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Agent-written text with its invisible code points (zero-width, bidi controls, other format
 * and control characters, unusual spaces) shown as `⟨U+XXXX⟩` markers, by the CLI's rule
 * (`@slivingdoc/envelope`'s `visibleSegments`): a reviewer sees what the bytes hold.
 */
export function visible(text: string): SafeHtml {
  return html`${visibleSegments(text).map((segment) =>
    'marker' in segment
      ? html`<span class="invisible" title="an invisible code point">${segment.marker}</span>`
      : segment.text,
  )}`;
}
