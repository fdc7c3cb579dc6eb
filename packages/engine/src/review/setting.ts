/**
 * The notebook's review setting (docs/review.md): which commits arriving through the MCP tools
 * publish at once (`direct`) and which become proposals a person decides (`queue`). It is stored
 * under the store key `review`, beside the notebook and outside its state.
 */
import { compareUtf8, DomainError } from '@slivingdoc/envelope';
import { createPathPolicy, PathSetError } from '@slivingdoc/policy';
import { isValidActor } from '../actor';

/** What a rule does to the commits it covers. */
export type ReviewMode = 'queue' | 'direct';

/** The rules of one scope (the whole notebook or one authenticated actor). */
export interface ReviewScope {
  /** The mode of a commit that touches no path entry of this scope. */
  mode: ReviewMode;
  /** Path entries (path-set syntax) and their modes; the longest matching entry decides a file. */
  paths: Record<string, ReviewMode>;
}

/** The whole setting, as stored (version 1). */
export interface ReviewSetting {
  version: 1;
  notebook: ReviewScope;
  /** Rules of authenticated actors (hub tokens), by actor name. */
  actors: Record<string, ReviewScope>;
}

/** The setting of a store that has none: today's behaviour. */
export const DEFAULT_REVIEW: ReviewSetting = Object.freeze({
  version: 1,
  notebook: { mode: 'direct', paths: {} },
  actors: {},
}) as ReviewSetting;

/** REVIEW · SETTING_INVALID: the stored setting cannot be parsed; commits are refused. */
export function reviewSettingInvalid(why: string): DomainError {
  return new DomainError({
    code: 'REVIEW',
    reason: 'SETTING_INVALID',
    message: `The notebook's review setting in the store cannot be parsed (${why}); commits are refused until a person rewrites it with slivingdoc review set. Nothing was published; your edits are still in the notebook directory.`,
  });
}

function isMode(value: unknown): value is ReviewMode {
  return value === 'queue' || value === 'direct';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validated path entries: the path-set rules of contract §5, normalised. */
export function normalisePaths(paths: readonly string[]): string[] {
  return createPathPolicy({ writable: [...paths], readOnly: [] }).sets.writable;
}

function parseScope(value: unknown, where: string): ReviewScope {
  if (!isRecord(value) || !isMode(value.mode) || !isRecord(value.paths)) {
    throw reviewSettingInvalid(`${where} is not a scope`);
  }
  const keys = Object.keys(value);
  if (keys.length !== 2) throw reviewSettingInvalid(`${where} has unknown fields`);
  const paths: Record<string, ReviewMode> = {};
  for (const [path, mode] of Object.entries(value.paths)) {
    if (!isMode(mode)) throw reviewSettingInvalid(`${where} has a path with an unknown mode`);
    let normalised: string[];
    try {
      normalised = normalisePaths([path]);
    } catch (err) {
      if (err instanceof PathSetError) throw reviewSettingInvalid(`${where} has an invalid path`);
      throw err;
    }
    if (normalised[0] !== path) throw reviewSettingInvalid(`${where} has a path not normalised`);
    paths[path] = mode;
  }
  return { mode: value.mode, paths };
}

/** Parses the stored bytes; throws REVIEW · SETTING_INVALID for anything else than version 1. */
export function parseReviewSetting(bytes: Uint8Array): ReviewSetting {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw reviewSettingInvalid('not JSON text');
  }
  if (!isRecord(value) || value.version !== 1) throw reviewSettingInvalid('not version 1');
  if (Object.keys(value).length !== 3 || !isRecord(value.actors)) {
    throw reviewSettingInvalid('unknown or missing fields');
  }
  const actors: Record<string, ReviewScope> = {};
  for (const [actor, scope] of Object.entries(value.actors)) {
    if (!isValidActor(actor)) throw reviewSettingInvalid('an actor name is invalid');
    actors[actor] = parseScope(scope, 'an actor rule');
  }
  return { version: 1, notebook: parseScope(value.notebook, 'the notebook rule'), actors };
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compareUtf8(a, b))) as Record<
    string,
    T
  >;
}

/** The stored bytes (keys sorted, so equal settings store equal bytes). */
export function encodeReviewSetting(setting: ReviewSetting): Uint8Array {
  const scope = (s: ReviewScope) => ({ mode: s.mode, paths: sortedRecord(s.paths) });
  const actors = Object.fromEntries(
    Object.entries(sortedRecord(setting.actors)).map(([name, s]) => [name, scope(s)]),
  );
  const text = JSON.stringify({ version: 1, notebook: scope(setting.notebook), actors });
  return new TextEncoder().encode(`${text}\n`);
}

/** One `review set` request. */
export interface ReviewRule {
  mode: ReviewMode;
  /** The actor scope; absent: the notebook-wide scope. */
  actor?: string | undefined;
  /** Path entries to set to `mode`; absent or empty: the scope's own mode. */
  paths?: readonly string[] | undefined;
}

/**
 * The setting with `rule` applied: with paths, each entry is set to the mode (other entries
 * stay); without, the scope's mode is set and its path entries are dropped (a fresh scope).
 */
export function applyRule(setting: ReviewSetting, rule: ReviewRule): ReviewSetting {
  const paths = normalisePaths(rule.paths ?? []);
  const previous =
    rule.actor === undefined
      ? setting.notebook
      : (setting.actors[rule.actor] ?? { mode: setting.notebook.mode, paths: {} });
  const scope: ReviewScope =
    paths.length === 0
      ? { mode: rule.mode, paths: {} }
      : {
          mode: previous.mode,
          paths: { ...previous.paths, ...Object.fromEntries(paths.map((p) => [p, rule.mode])) },
        };
  return rule.actor === undefined
    ? { ...setting, notebook: scope }
    : { ...setting, actors: { ...setting.actors, [rule.actor]: scope } };
}

function modeOf(scope: ReviewScope, path: string): ReviewMode {
  let best = -1;
  let mode = scope.mode;
  for (const [entry, entryMode] of Object.entries(scope.paths)) {
    const matches = path === entry || path.startsWith(`${entry}/`);
    if (matches && entry.length > best) {
      best = entry.length;
      mode = entryMode;
    }
  }
  return mode;
}

/** The scope that binds `actor`: its own when it is authenticated and has one, else the notebook's. */
function scopeFor(setting: ReviewSetting, actor: string | undefined): ReviewScope {
  return actor !== undefined && Object.hasOwn(setting.actors, actor)
    ? setting.actors[actor]!
    : setting.notebook;
}

/** Who commits and what: the inputs of {@link decideReview}. */
export interface ReviewSubject {
  /** The actor when it is authenticated (a hub token's); undefined over stdio and the CLI. */
  authenticatedActor?: string | undefined;
  /** A stricter mode the caller's credential carries (`token add --review queue`). */
  floor?: ReviewMode | undefined;
  /** The notebook paths the commit changes. */
  changed: readonly string[];
}

/**
 * docs/review.md, precedence: an authenticated actor's scope, when one exists, decides in place
 * of the notebook-wide scope; within the scope the longest matching path entry decides each
 * file, else the scope's mode; the commit is queued whole when any file is queued. A token's
 * floor of `queue` queues every commit, whatever the setting says.
 */
export function decideReview(setting: ReviewSetting, subject: ReviewSubject): ReviewMode {
  if (subject.floor === 'queue') return 'queue';
  const scope = scopeFor(setting, subject.authenticatedActor);
  return subject.changed.some((path) => modeOf(scope, path) === 'queue') ? 'queue' : 'direct';
}

/** Whether the setting can queue anything at all for this subject (for the tool descriptions). */
export function mayQueue(setting: ReviewSetting, subject: Omit<ReviewSubject, 'changed'>): boolean {
  if (subject.floor === 'queue') return true;
  const scope = scopeFor(setting, subject.authenticatedActor);
  return scope.mode === 'queue' || Object.values(scope.paths).includes('queue');
}
