/**
 * Makes invisible code points visible, for a reviewer who must see what an agent wrote
 * (docs/review.md): control characters, format characters (zero-width, bidi embeddings,
 * overrides and isolates, BOM, soft hyphen), line and paragraph separators, spaces other than
 * U+0020 and the blank-looking fillers become `⟨U+XXXX⟩`. Tab and line feed stay as they are.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\u115F\u1160\u3164\uFFA0\u2800]/gu;

/** The code point as `⟨U+XXXX⟩`. */
function marker(char: string): string {
  const hex = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `⟨U+${hex}⟩`;
}

/** `text` with every invisible code point but tab, line feed and space shown as `⟨U+XXXX⟩`. */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (char) =>
    char === '\t' || char === '\n' || char === ' ' ? char : marker(char),
  );
}

/** True when `text` holds a code point {@link visibleText} would mark. */
export function hasInvisible(text: string): boolean {
  return visibleText(text) !== text;
}
