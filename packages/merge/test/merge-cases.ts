import type { seededRandom } from '@slivingdoc/testkit/seeded-random';

/** One three-way text case (base, local, remote) and the kind of edit that produced it. */
export interface Case {
  kind: string;
  base: string;
  local: string;
  remote: string;
}

/** One generated three-way case: random line edits, same-place insertions, deletions, identical edits, CRLF, no final newline. */
export function generateCase(random: ReturnType<typeof seededRandom>, index: number): Case {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const words = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'ü', '日本'];
  const eolMode = pick(['lf', 'lf', 'crlf', 'mixed'] as const);
  const eol = () => (eolMode === 'lf' ? '\n' : eolMode === 'crlf' ? '\r\n' : pick(['\n', '\r\n']));
  const size = Math.floor(random() * 14);
  const base = Array.from(
    { length: size },
    () => `${pick(words)}${Math.floor(random() * 4)}${eol()}`,
  );
  const kinds = [
    'edit',
    'insert',
    'delete',
    'identical',
    'same-place-insert',
    'no-final-newline',
  ] as const;
  const kind = kinds[index % kinds.length] as (typeof kinds)[number];
  const fresh = () => `${pick(words)}-new${Math.floor(random() * 3)}${eol()}`;
  const mutate = (lines: string[]): string[] => {
    const out = [...lines];
    const edits = 1 + Math.floor(random() * 3);
    for (let n = 0; n < edits; n++) {
      const at = Math.floor(random() * (out.length + 1));
      const op = pick(['edit', 'insert', 'delete'] as const);
      if (op === 'insert' || out.length === 0) out.splice(at, 0, fresh());
      else if (op === 'delete') out.splice(Math.min(at, out.length - 1), 1);
      else out[Math.min(at, out.length - 1)] = fresh();
    }
    return out;
  };
  let local: string[];
  let remote: string[];
  if (kind === 'identical') {
    local = mutate(base);
    remote = random() < 0.5 ? [...local] : mutate(local);
  } else if (kind === 'same-place-insert') {
    const at = Math.floor(random() * (base.length + 1));
    local = [...base];
    remote = [...base];
    local.splice(at, 0, fresh());
    remote.splice(at, 0, random() < 0.3 ? (local[at] as string) : fresh());
  } else if (kind === 'delete') {
    const at = Math.floor(random() * Math.max(base.length, 1));
    local = base.filter((_, i) => i !== at);
    remote = mutate(base);
  } else {
    local = mutate(base);
    remote = mutate(base);
  }
  const strip = (lines: string[]) => {
    const joined = lines.join('');
    return kind === 'no-final-newline' && random() < 0.8 ? joined.replace(/\r?\n$/, '') : joined;
  };
  return { kind, base: strip(base), local: strip(local), remote: strip(remote) };
}

/** A case where both sides only insert, at the same place of the base. */
export interface InsertionCase extends Case {
  /** What each side inserted, lines with their terminators. */
  localInserted: string[];
  remoteInserted: string[];
}

/**
 * Both sides insert at one place of a base of distinct lines, from a small pool of new lines
 * so the insertions share lines; by index: free, L a prefix of R, R a prefix of L, the same
 * first line, and (at the end of the file) a last inserted line without a line ending.
 */
export function generateInsertionCase(
  random: ReturnType<typeof seededRandom>,
  index: number,
): InsertionCase {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const crlf = random() < 0.25;
  const eol = () => (crlf ? '\r\n' : random() < 0.1 ? '\r\n' : '\n');
  const size = Math.floor(random() * 8);
  const base = Array.from({ length: size }, (_, n) => `line ${n}${eol()}`);
  const inserted = () =>
    Array.from(
      { length: 1 + Math.floor(random() * 4) },
      () => `${pick(['x', 'y', 'z', 'w'])}${eol()}`,
    );
  const shape = index % 5;
  let local = inserted();
  let remote = inserted();
  if (shape === 1) local = remote.slice(0, 1 + Math.floor(random() * remote.length));
  if (shape === 2) remote = local.slice(0, 1 + Math.floor(random() * local.length));
  if (shape === 3) remote = [local[0] as string, ...remote];
  const at = shape === 4 ? size : Math.floor(random() * (size + 1));
  if (shape === 4) {
    const unterminated = (lines: string[]) => [
      ...lines.slice(0, -1),
      (lines.at(-1) as string).replace(/\r?\n$/, ''),
    ];
    const side = pick(['local', 'remote', 'both'] as const);
    if (side !== 'remote') local = unterminated(local);
    if (side !== 'local') remote = unterminated(remote);
  }
  const join = (lines: string[]) => [...base.slice(0, at), ...lines, ...base.slice(at)].join('');
  return {
    kind: ['free', 'local-prefix', 'remote-prefix', 'same-start', 'no-final-newline'][
      shape
    ] as string,
    base: base.join(''),
    local: join(local),
    remote: join(remote),
    localInserted: local,
    remoteInserted: remote,
  };
}
