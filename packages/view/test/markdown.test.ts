/** Untrusted Markdown renders to HTML with nothing active left in it. */
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, pathUrl } from '../src/html';
import { renderMarkdown } from '../src/markdown';

const TAGS = new Set(
  'h1 h2 h3 h4 h5 h6 p br hr blockquote pre code em strong s del ul ol li a table thead tbody tr th td span'.split(
    ' ',
  ),
);
const ATTRIBUTES = new Set(['href', 'title', 'rel', 'referrerpolicy', 'class', 'start']);

/** Every element and attribute of the output is on the allowlist; every href is inert. */
function activeParts(out: string): string[] {
  const found: string[] = [];
  for (const [, name, attributes] of out.matchAll(/<\/?([a-zA-Z0-9]+)([^>]*)>/g)) {
    if (!TAGS.has((name as string).toLowerCase())) found.push(`tag ${name}`);
    for (const [, attribute, value] of (attributes as string).matchAll(/([^\s=]+)="([^"]*)"/g)) {
      if (!ATTRIBUTES.has(attribute as string)) found.push(`attribute ${attribute}`);
      if (attribute === 'href' && !/^(https?:|mailto:|[^:]*$)/i.test(value as string))
        found.push(`href ${value}`);
    }
  }
  return found;
}

describe('renderMarkdown', () => {
  it.each([
    ['script tag', '<script>alert(1)</script>'],
    ['onerror', '<img src=x onerror=alert(1)>'],
    ['javascript link', '[x](javascript:alert(1))'],
    ['encoded javascript link', '[x](jav&#x61;script:alert(1))'],
    ['data link', '[x](data:text/html;base64,PHNjcmlwdD4=)'],
    ['vbscript link', '[x](vbscript:msgbox(1))'],
    ['reference link', '[x][r]\n\n[r]: javascript:alert(1)'],
    ['autolink', '<javascript:alert(1)>'],
    ['svg', '<svg onload=alert(1)><script>alert(1)</script></svg>'],
    ['iframe', '<iframe src="https://evil.example"></iframe>'],
    ['style', '<style>body{background:url(http://evil.example/x)}</style>'],
    ['inline style', '<div style="background:url(http://evil.example/x)">x</div>'],
    ['image', '![a](http://evil.example/pixel.png)'],
    ['svg image', '![a](data:image/svg+xml;base64,PHN2Zz4=)'],
    ['table alignment', '| a |\n|:-:|\n| b |'],
  ])('%s', (_name, source) => {
    const out = renderMarkdown(source).value;
    expect(activeParts(out), out).toEqual([]);
  });

  it('keeps ordinary Markdown and shows images and link targets as text', () => {
    const out = renderMarkdown(
      '# T\n\n*e* [good](https://a.example) ![alt](https://b.example/i.png)\n',
    ).value;
    expect(out).toContain('<h1>T</h1>');
    expect(out).toContain('<em>e</em>');
    expect(out).toContain(
      '<a href="https://a.example" rel="noopener noreferrer nofollow" referrerpolicy="no-referrer">good</a><span class="href"> (https://a.example)</span>',
    );
    expect(out).toContain(
      '<span class="image">image: alt <code>https://b.example/i.png</code></span>',
    );
  });
});

describe('html', () => {
  it('escapes every interpolation unless it is already safe', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"x"'}">${inner}${['<', '>']}${undefined}${false}</p>`.value).toBe(
      '<p title="&quot;x&quot;"><b>&lt;i&gt;</b>&lt;&gt;</p>',
    );
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
    expect(pathUrl('/files', 'a b/c?.md')).toBe('/files/a%20b/c%3F.md');
  });
});
