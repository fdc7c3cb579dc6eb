/**
 * Text from the notebook's history (messages) shown on a terminal: control characters other
 * than tab become U+FFFD, so a message cannot move the cursor or recolour the terminal.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, '\ufffd');
}

/** A time (UTC seconds since the epoch) as `2026-12-01 20:15:03 UTC`. */
export function utcTime(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A time as RFC 3339 in UTC (`2026-12-01T20:15:03Z`), for JSON. */
export function isoTime(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** `n thing`/`n things`. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
