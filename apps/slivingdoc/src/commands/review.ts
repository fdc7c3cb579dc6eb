import {
  type ListedProposal,
  listProposals,
  type ProposalRecord,
  proposalDiffs,
  type ReviewScope,
  type ReviewSetting,
  rejectProposal,
  requireProposal,
  setReview,
  showReview,
} from '@slivingdoc/engine';
import {
  buildError,
  type DomainError,
  internalError,
  isDomainError,
  newDiagnosticId,
  renderCliError,
  renderCliSuccess,
  useColor,
  visibleText,
} from '@slivingdoc/envelope';
import type { ObjectStore } from '@slivingdoc/store';
import type { Invocation } from '../config/types';
import { runOneShot } from '../runtime/one-shot';
import { asRefusal, refuse } from '../runtime/refuse';
import { processScrubber } from '../runtime/scrubber';
import { openStore, probeStore } from '../runtime/store';

type ReviewInvocation = Extract<Invocation, { kind: 'review' }>;
type ProposalsInvocation = Extract<Invocation, { kind: 'proposals' }>;
type ApproveInvocation = Extract<Invocation, { kind: 'approve' }>;

/**
 * Runs a command that needs only the store (no notebook directory): the report on stdout,
 * exit 0; a domain error's candid text, exit 1; a store that cannot be opened, a refusal.
 */
async function runOnStore(
  invocation: ReviewInvocation | ProposalsInvocation,
  writes: boolean,
  work: (store: ObjectStore) => Promise<string>,
): Promise<number> {
  const scrubber = processScrubber();
  let store: ObjectStore;
  try {
    store = await openStore(invocation.config.store);
    // A command that writes first proves the store's conditional writes (and picks their form).
    if (writes) await probeStore(store);
  } catch (error) {
    return refuse(asRefusal(error), scrubber);
  }
  try {
    process.stdout.write(await work(store));
    return 0;
  } catch (error) {
    const domain: DomainError = isDomainError(error) ? error : internalError(error);
    const sets = { readOnly: [], writable: [] };
    const built = buildError(domain, { diagnosticId: newDiagnosticId(), sets, scrubber });
    process.stdout.write(renderCliError(built, { color: useColor(process.stdout, process.env) }));
    return 1;
  } finally {
    await store.close?.();
  }
}

function scopeLines(title: string, scope: ReviewScope): string[] {
  const lines = [`${title}: ${scope.mode}`];
  for (const [path, mode] of Object.entries(scope.paths)) lines.push(`  ${path}  ${mode}`);
  return lines;
}

function renderSetting(setting: ReviewSetting): string {
  const lines = scopeLines('notebook', setting.notebook);
  for (const [actor, scope] of Object.entries(setting.actors)) {
    lines.push(...scopeLines(`actor ${visibleText(actor)}`, scope));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `slivingdoc review set queue|direct [--actor NAME] [--paths P…]` and `review show [--json]`:
 * the notebook's review setting in the store (docs/review.md).
 */
export function runReview(invocation: ReviewInvocation): Promise<number> {
  return runOnStore(invocation, invocation.action === 'set', async (store) => {
    if (invocation.action === 'set') {
      const setting = await setReview(store, {
        mode: invocation.mode!,
        actor: invocation.ruleActor,
        paths: invocation.paths,
      });
      return `${renderSetting(setting)}Every server applies it from its next call; a commit that had already read the previous setting may still land after this returns.\n`;
    }
    const shown = await showReview(store);
    if (invocation.json) return `${JSON.stringify(shown)}\n`;
    if (shown.state === 'invalid') return `invalid: ${shown.problem}\n`;
    return renderSetting(shown.setting);
  });
}

/** The JSON summary of a proposal (bytes never inline; `proposals show` has the diff). */
function summary(record: ProposalRecord) {
  return {
    id: record.id,
    state: record.state,
    revision: record.revision,
    actor: record.actor,
    baseGeneration: record.baseGeneration,
    message: record.message,
    files: record.files.map((file) => file.path),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    ...(record.decision === undefined ? {} : { decision: record.decision }),
  };
}

function listLine(listed: ListedProposal): string {
  if ('malformed' in listed) return `${listed.id}  malformed  ${listed.malformed}`;
  const { record } = listed;
  const subject = record.message.split('\n')[0] ?? '';
  return [
    record.id,
    record.state,
    `revision ${record.revision}`,
    visibleText(record.actor),
    `${record.files.length} ${record.files.length === 1 ? 'file' : 'files'}`,
    record.updatedAt,
    visibleText(subject),
  ].join('  ');
}

function renderProposal(record: ProposalRecord): string {
  const lines = [
    `proposal ${record.id}  ${record.state}  revision ${record.revision}`,
    `actor: ${visibleText(record.actor)}`,
    `base generation: ${record.baseGeneration}`,
    `created: ${record.createdAt}  updated: ${record.updatedAt}`,
  ];
  const decision = record.decision;
  if (decision !== undefined) {
    lines.push(
      `${record.state} by ${visibleText(decision.by)} at ${decision.at} (revision ${decision.revision})${decision.generation === undefined ? '' : `, published as generation ${decision.generation}`}`,
    );
    if (decision.reason !== undefined) lines.push(`reason: ${visibleText(decision.reason)}`);
  }
  lines.push(
    '',
    ...visibleText(record.message)
      .split('\n')
      .map((line) => `    ${line}`),
    '',
  );
  for (const diff of proposalDiffs(record)) {
    lines.push(`${diff.change} ${visibleText(diff.path)}  +${diff.insertions} -${diff.deletions}`);
    if (diff.binary) lines.push('  (binary content)');
    for (const hunk of diff.hunks) {
      lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
      for (const line of hunk.lines) {
        const mark = line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' ';
        lines.push(`${mark}${visibleText(line.text)}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `slivingdoc proposals list | show ID | reject ID [--reason …]` (docs/review.md). */
export function runProposals(invocation: ProposalsInvocation): Promise<number> {
  return runOnStore(invocation, invocation.action === 'reject', async (store) => {
    if (invocation.action === 'list') {
      const listed = await listProposals(store);
      if (invocation.json) {
        return `${JSON.stringify(listed.map((p) => ('record' in p ? summary(p.record) : p)))}\n`;
      }
      return listed.length === 0 ? 'no proposals\n' : `${listed.map(listLine).join('\n')}\n`;
    }
    const id = invocation.id!;
    if (invocation.action === 'show') {
      const { record } = await requireProposal(store, id);
      return invocation.json ? `${JSON.stringify(summary(record))}\n` : renderProposal(record);
    }
    const rejected = await rejectProposal(store, {
      id,
      by: invocation.config.actor ?? 'slivingdoc',
      reason: invocation.reason,
    });
    if (invocation.json) return `${JSON.stringify(summary(rejected))}\n`;
    return `rejected ${rejected.id} revision ${rejected.decision?.revision}; nothing was published, and its bytes stay readable with slivingdoc proposals show ${rejected.id}\n`;
  });
}

/**
 * `slivingdoc proposals approve ID [PATH] [--revision N]`: merges the proposal onto the
 * accepted notebook through the clean, pulled directory PATH (default: the current one) and
 * publishes it once, authored by the agent; reports as commit does.
 */
export function runApprove(invocation: ApproveInvocation): Promise<number> {
  const { path, config } = invocation;
  return runOneShot(
    invocation,
    { probe: true, quiet: invocation.quiet, progress: true },
    async ({ service, color, onProgress }) => {
      const result = await service.approve({
        id: invocation.id,
        path,
        actor: config.actor ?? 'slivingdoc',
        ...(invocation.revision === undefined ? {} : { revision: invocation.revision }),
        ...(onProgress === undefined ? {} : { onProgress }),
      });
      if (invocation.json) return `${JSON.stringify(summary(result.approved))}\n`;
      const decision = result.approved.decision;
      // The approval publishes without writing the directory (docs/review.md): say so, since a
      // commit's OK line otherwise means the directory holds what was published.
      return `${renderCliSuccess(result, { color })}approved ${result.approved.id} revision ${decision?.revision} by ${visibleText(decision?.by ?? '')}: published as generation ${decision?.generation}, authored by ${visibleText(result.approved.actor)}\nthis directory is unchanged: slivingdoc pull brings the approved files in\n`;
    },
  );
}
