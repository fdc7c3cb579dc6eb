import type { BlameLine, BlameResult } from '@slivingdoc/engine';
import type { Invocation } from '../config/types';
import { isoTime, printable, utcTime } from '../report/text';
import { runOneShot } from '../runtime/one-shot';

type BlameInvocation = Extract<Invocation, { kind: 'blame' }>;

/**
 * `slivingdoc blame <path> <file> [--json]`: for every line of the file at the accepted
 * generation, the retained publication that last changed it (or "before generation N" for a
 * line older than the retained history). Read-only, as `log`: skips the store's probe, never
 * shows an object id, key or private path.
 */
export function runBlame(invocation: BlameInvocation): Promise<number> {
  const { path, file } = invocation;
  return runOneShot(
    invocation,
    { probe: false, quiet: false, progress: false },
    async ({ service, color }) => {
      const blame = await service.blame({ path, file });
      return invocation.json
        ? `${JSON.stringify(blameJson(blame))}\n`
        : renderBlame(blame.lines, color);
    },
  );
}

/** The `--json` object; its field names are stable (docs/cli.md). */
function blameJson(blame: BlameResult) {
  return {
    path: blame.path,
    file: blame.file,
    generation: blame.generation,
    lines: blame.lines.map(({ number, text, origin }) =>
      'before' in origin
        ? { line: number, text, publication: null, before: origin.before }
        : {
            line: number,
            text,
            publication: {
              generation: origin.generation,
              time: isoTime(origin.time),
              actor: origin.actor,
              subject: origin.message.split('\n')[0] ?? '',
              message: origin.message,
            },
            before: null,
          },
    ),
  };
}

/** One column per line: who (padded to the widest), the line number, the line. */
function renderBlame(lines: BlameLine[], color: boolean): string {
  if (lines.length === 0) return '(empty file)\n';
  const who = lines.map(({ origin }) =>
    'before' in origin
      ? `before generation ${origin.before}`
      : `generation ${origin.generation}  ${utcTime(origin.time)}  ${printable(origin.actor)}`,
  );
  const width = Math.max(...who.map((text) => [...text].length));
  const numbers = String(lines.length).length;
  return lines
    .map((line, index) => {
      const label = (who[index] as string).padEnd(
        width + (who[index] as string).length - [...(who[index] as string)].length,
      );
      const shown = color ? `\x1b[33m${label}\x1b[0m` : label;
      return `${shown}  ${String(line.number).padStart(numbers)}  ${printable(line.text)}\n`;
    })
    .join('');
}
