/**
 * Makes invisible code points visible, for a reviewer who must see what an agent wrote
 * (docs/review.md): control characters, format characters (zero-width, bidi embeddings,
 * overrides and isolates, BOM, soft hyphen), line and paragraph separators, spaces other than
 * U+0020 and the blank-looking fillers become `⟨U+XXXX⟩`. Tab and line feed stay as they are.
 * The CLI prints {@link visibleText}; the web view renders {@link visibleSegments} with the
 * same rule and marks the code points apart from the text.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\u115F\u1160\u3164\uFFA0\u2800]/gu;

/** The code point as `⟨U+XXXX⟩`. */
function marker(char: string): string {
  const hex = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `⟨U+${hex}⟩`;
}

function shown(char: string): boolean {
  return char === '\t' || char === '\n' || char === ' ';
}

/** A run of ordinary text, or one invisible code point shown as its `⟨U+XXXX⟩` marker. */
export type VisibleSegment = { text: string } | { marker: string };

/** `text` cut into ordinary runs and the markers of its invisible code points, in order. */
export function visibleSegments(text: string): VisibleSegment[] {
  const segments: VisibleSegment[] = [];
  let from = 0;
  for (const found of text.matchAll(INVISIBLE)) {
    if (shown(found[0])) continue;
    if (found.index > from) segments.push({ text: text.slice(from, found.index) });
    segments.push({ marker: marker(found[0]) });
    from = found.index + found[0].length;
  }
  if (from < text.length) segments.push({ text: text.slice(from) });
  return segments;
}

/** `text` with every invisible code point but tab, line feed and space shown as `⟨U+XXXX⟩`. */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (char) => (shown(char) ? char : marker(char)));
}

/** True when `text` holds a code point {@link visibleText} would mark. */
export function hasInvisible(text: string): boolean {
  return visibleText(text) !== text;
}
