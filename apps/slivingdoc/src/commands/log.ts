import type { HistoryResult, PublicationRecord } from '@slivingdoc/engine';
import { renderDiffstat } from '@slivingdoc/envelope';
import type { Invocation } from '../config/types';
import { isoTime, printable, utcTime } from '../report/text';
import { runOneShot } from '../runtime/one-shot';

type LogInvocation = Extract<Invocation, { kind: 'log' }>;

/**
 * `slivingdoc log <path> [-n N] [--stat] [--full] [--json]`: the retained history, newest
 * first, from the directory's private state (fetching only the packs it lacks). Skips the
 * store's compatibility probe (it writes); never shows an object id, key or private path.
 */
export function runLog(invocation: LogInvocation): Promise<number> {
  const { path } = invocation;
  return runOneShot(
    invocation,
    { probe: false, quiet: false, progress: false },
    async ({ service, color }) => {
      const history = await service.log({ path, limit: invocation.limit, stat: invocation.stat });
      return invocation.json
        ? `${JSON.stringify(logJson(history, invocation.stat))}\n`
        : renderLog(history, invocation, color);
    },
  );
}

function subjectOf(message: string): string {
  return message.split('\n')[0] ?? '';
}

/** The `--json` object; its field names are stable (docs/cli.md). */
function logJson(history: HistoryResult, stat: boolean) {
  return {
    path: history.path,
    storeGeneration: history.generation,
    publications: history.publications.map((publication) => ({
      generation: publication.generation,
      time: isoTime(publication.time),
      actor: publication.actor,
      subject: subjectOf(publication.message),
      message: publication.message,
      // With --stat: null when the state before it is no longer retained.
      ...(stat ? { files: publication.files ?? null } : {}),
    })),
  };
}

function renderLog(history: HistoryResult, invocation: LogInvocation, color: boolean): string {
  if (history.publications.length === 0) return 'no publications in the retained history\n';
  const blocks = history.publications.map((publication) =>
    renderPublication(publication, invocation, color),
  );
  return blocks.join(invocation.full || invocation.stat ? '\n' : '');
}

function renderPublication(
  publication: PublicationRecord,
  invocation: LogInvocation,
  color: boolean,
): string {
  const generation = `generation ${publication.generation}`;
  const head = `${color ? `\x1b[33m${generation}\x1b[0m` : generation}  ${utcTime(publication.time)}  ${publication.actor}`;
  let out = invocation.full
    ? `${head}\n${publication.message
        .replace(/\n+$/, '')
        .split('\n')
        .map((line) => `    ${printable(line)}`)
        .join('\n')}\n`
    : `${head}  ${printable(subjectOf(publication.message))}\n`;
  if (invocation.stat) {
    const files = publication.files;
    out +=
      files === undefined
        ? '  (changes not available: the state before it is no longer retained)\n'
        : renderDiffstat(
            {
              files,
              filesChanged: files.length,
              insertions: files.reduce((sum, file) => sum + file.insertions, 0),
              deletions: files.reduce((sum, file) => sum + file.deletions, 0),
            },
            { color },
          ).replace(/^(?! )(?=.)/gm, '  ');
  }
  return out;
}
