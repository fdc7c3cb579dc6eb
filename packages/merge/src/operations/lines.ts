/**
 * Text is handled as latin1 strings (one char per byte), so splitting on LF never cuts a UTF-8
 * sequence and every byte, CR included, round-trips exactly.
 */
export function toByteString(content: Uint8Array): string {
  return Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('latin1');
}

/** The inverse of {@link toByteString}. */
export function fromByteString(text: string): Uint8Array {
  return Buffer.from(text, 'latin1');
}

/** Lines with their terminators kept (LF, CRLF, or none on a final line). Empty text has none. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The line ending of the first terminated line, or undefined when there is none. */
export function firstLineEnding(text: string): '\n' | '\r\n' | undefined {
  const lf = text.indexOf('\n');
  if (lf < 0) return undefined;
  return lf > 0 && text.charCodeAt(lf - 1) === 13 ? '\r\n' : '\n';
}

/** The line's text without its LF or CRLF terminator (a lone CR stays part of the text). */
export function lineText(line: string): string {
  if (line.endsWith('\r\n')) return line.slice(0, -2);
  if (line.endsWith('\n')) return line.slice(0, -1);
  return line;
}
