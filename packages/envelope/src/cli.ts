import type { ErrorResult, FileStat, SuccessResult } from './results';
import { candidText, reviewLines, successText } from './text';

// Plain SGR sequences rather than util.styleText: newer Node versions make styleText decide
// colour from process.stdout and the environment itself, and here the caller decides.
const SGR = { green: '\x1b[32m', red: '\x1b[31m', bold: '\x1b[1m', reset: '\x1b[0m' } as const;

type Paint = (style: keyof typeof SGR, text: string) => string;

function painter(color: boolean): Paint {
  return color ? (style, text) => `${SGR[style]}${text}${SGR.reset}` : (_style, text) => text;
}

/**
 * Whether a report written to `stream` may use colour: only on a TTY, and never when
 * `NO_COLOR` is set to a non-empty value (https://no-color.org).
 */
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function fileLine(file: FileStat, paint: Paint): string {
  const parts: string[] = [];
  if (file.insertions > 0) parts.push(paint('green', `+${file.insertions}`));
  if (file.deletions > 0) parts.push(paint('red', `-${file.deletions}`));
  // A 0/0 entry (an empty file added or deleted) still says something changed.
  if (parts.length === 0) parts.push(paint('green', '+0'));
  return `  ${file.path}  ${parts.join(' ')}`;
}

/**
 * The diffstat trailer in git's wording (diff.c print_stat_summary): a zero side is omitted
 * unless both are zero, and singular/plural follow the counts.
 */
export function diffstatTrailer(result: {
  filesChanged: number;
  insertions: number;
  deletions: number;
}): string {
  const { filesChanged, insertions, deletions } = result;
  if (filesChanged === 0) return '0 files changed';
  let line = plural(filesChanged, 'file changed', 'files changed');
  if (insertions > 0 || deletions === 0)
    line += `, ${plural(insertions, 'insertion(+)', 'insertions(+)')}`;
  if (deletions > 0 || insertions === 0)
    line += `, ${plural(deletions, 'deletion(-)', 'deletions(-)')}`;
  return line;
}

/**
 * The file lines and the trailer of a report (each line ending in LF): what `renderCliSuccess`
 * prints below its first line, for other CLI reports (status, log --stat) to print alike.
 */
export function renderDiffstat(
  result: { files: FileStat[]; filesChanged: number; insertions: number; deletions: number },
  opts: { color: boolean },
): string {
  const paint = painter(opts.color);
  return [...result.files.map((file) => fileLine(file, paint)), diffstatTrailer(result)]
    .map((line) => `${line}\n`)
    .join('');
}

/**
 * The CLI's success report of contract §12 (pull/commit), ending in LF: `OK  generation N  <path>`
 * with the path-set suffix, one line per file, then the totals trailer.
 */
export function renderCliSuccess(result: SuccessResult, opts: { color: boolean }): string {
  const paint = painter(opts.color);
  const sets = { readOnly: result.readOnly, writable: result.writable };
  const first = `${paint('green', 'OK')}  generation ${result.generation}  ${successText(result.path, sets)}`;
  const review = reviewLines(result).map((line) => `${line}\n`);
  return `${first}\n${review.join('')}${renderDiffstat(result, opts)}`;
}

/**
 * The CLI's error report: the candid text (already scrubbed by `buildError`), ending in LF;
 * with colour, the `CODE · REASON` headline is bold red.
 */
export function renderCliError(error: ErrorResult, opts: { color: boolean }): string {
  const text = candidText(error, { readOnly: error.readOnly, writable: error.writable });
  const newline = text.indexOf('\n');
  const headline = newline === -1 ? text : text.slice(0, newline);
  const rest = newline === -1 ? '' : text.slice(newline);
  const paint = painter(opts.color);
  return `${paint('bold', paint('red', headline))}${rest}\n`;
}
