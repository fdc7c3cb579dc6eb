import type { NotebookState, NotebookStatus } from '@slivingdoc/engine';
import { renderDiffstat } from '@slivingdoc/envelope';
import type { Invocation } from '../config/types';
import { describeStore, type StoreDescription } from '../report/store';
import { plural } from '../report/text';
import { runOneShot } from '../runtime/one-shot';
import { processScrubber } from '../runtime/scrubber';

const STATE_TEXT: Record<NotebookState, string> = {
  'not-pulled': 'not pulled',
  clean: 'clean',
  changed: 'changed',
  'recovery-pending': 'recovery pending',
};

const STATE_COLOUR: Record<NotebookState, string> = {
  'not-pulled': '\x1b[33m',
  clean: '\x1b[32m',
  changed: '\x1b[33m',
  'recovery-pending': '\x1b[31m',
};

/**
 * `slivingdoc status <path> [--json]`: read-only. Skips the store's compatibility probe (it
 * writes) and downloads nothing but `current`.
 */
export function runStatus(invocation: Extract<Invocation, { kind: 'status' }>): Promise<number> {
  const { path, config } = invocation;
  const store = describeStore(config.store, processScrubber().text);
  return runOneShot(
    invocation,
    { probe: false, quiet: false, progress: false },
    async ({ service, color }) => {
      const status = await service.status({ path });
      return invocation.json
        ? `${JSON.stringify(statusJson(status, store))}\n`
        : renderStatus(status, store, color);
    },
  );
}

/** The `--json` object; its field names are stable (docs/cli.md). */
function statusJson(status: NotebookStatus, store: StoreDescription) {
  return {
    path: status.path,
    state: status.state,
    store,
    storeGeneration: status.storeGeneration,
    baselineGeneration: status.baselineGeneration,
    behind: status.behind,
    filesChanged: status.filesChanged,
    insertions: status.insertions,
    deletions: status.deletions,
    files: status.files,
    unsupported: status.unsupported.map(({ path, reason }) => ({ path, reason })),
    privateState: status.privateState,
    proposal: status.proposal,
  };
}

/** `1.5 MiB`: binary units, one decimal above bytes. */
function formatBytes(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

function renderStatus(status: NotebookStatus, store: StoreDescription, color: boolean): string {
  const state = STATE_TEXT[status.state];
  const lines = [
    `${color ? `${STATE_COLOUR[status.state]}${state}\x1b[0m` : state}  ${status.path}`,
    `  store     ${store.kind}  ${store.location}${store.endpoint ? `  ${store.endpoint}` : ''}  prefix ${store.prefix === '' ? '(bucket root)' : store.prefix}`,
    `  accepted  generation ${status.storeGeneration}`,
    status.baselineGeneration === null
      ? '  baseline  none: run slivingdoc pull on this directory'
      : `  baseline  generation ${status.baselineGeneration}${status.behind ? ` (${plural(status.behind, 'publication', 'publications')} behind)` : ' (up to date)'}`,
  ];
  if (status.privateState !== null) {
    const { objects, packs, bytes } = status.privateState;
    lines.push(
      `  private   ${plural(objects, 'object', 'objects')}, ${plural(packs, 'pack', 'packs')}, ${formatBytes(bytes)}`,
    );
  }
  if (status.proposal !== null) {
    const { id, revision, state } = status.proposal;
    lines.push(
      state === 'open'
        ? `  proposal  ${id} revision ${revision}, waiting for a person (slivingdoc proposals show ${id})`
        : `  proposal  ${id} revision ${revision}, ${state}: the next pull or commit reports it`,
    );
  }
  if (status.state === 'recovery-pending') {
    lines.push('  an interrupted operation left a repair pending: the next pull or commit runs it');
  }
  for (const { path, reason } of status.unsupported) {
    lines.push(`  ${path}  not notebook state (${reason})`);
  }
  const head = `${lines.join('\n')}\n`;
  return status.state === 'not-pulled' ? head : head + renderDiffstat(status, { color });
}
