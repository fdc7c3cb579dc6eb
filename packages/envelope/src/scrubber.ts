/**
 * The one scrubber over diagnostic prose (contract §3): defence in depth, since results never
 * contain secrets, store keys, private paths or git ids by construction. It is applied to
 * `message`, `detail`, the candid text's prose and the CLI error report, never to structured
 * data: a note named `notes/<40 hex>.md` is the caller's data and stays as given.
 */
export interface Scrubber {
  /** Scrubs diagnostic prose of every pattern of contract §3. */
  text(s: string): string;
  /** Scrubs only credentials (secret values, key ids, URL user info): for log causes. */
  credentials(s: string): string;
}

/** What a scrubbed span becomes. Brackets are not hex or key-id characters, so a replacement
 * never joins its neighbours into a new hex run or key id. */
export const REDACTED = '[redacted]';
/** What the private root becomes; the rest of a path below it stays readable. */
export const PRIVATE_ROOT = '[private]';

/**
 * Without a list of secret variables, every environment variable whose name says it holds a
 * secret is taken for one (`…SECRET…`, `…TOKEN…`, `…PASSWORD…`, `…CREDENTIAL…`, `…_KEY`,
 * `…_KEY_ID`): a caller that forgets the list still never shows a credential. The app passes
 * the secret variables its store drivers declare.
 */
export const SECRET_ENV_NAME = /SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|_KEY$|_KEY_ID$/i;

/** Shorter values are not treated as secrets: scrubbing them would shred ordinary prose. */
const MIN_SECRET_LENGTH = 4;

// AWS access key ids: AKIA (long-term) or ASIA (temporary) and 16 more characters. No word
// boundary: the id is scrubbed wherever it appears, glued to other text or not.
const KEY_ID = /(?:AKIA|ASIA)[A-Z0-9]{16,}/g;
// scheme://user[:password]@ — the user info is replaced, the scheme and host stay.
const URL_USER_INFO = /\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s/?#@]*(?:@[^\s/?#@]*)*@/g;
// Store keys of packs and probes, with whatever prefix precedes them.
const PACK_KEY = /[^\s'"`()<>[\]{},;:]*packs\/(?:checkpoints|increments)\/[^\s'"`()<>[\]{},;:]*/g;
const PROBE_KEY = /[^\s'"`()<>[\]{},;:]*probe\/[0-9a-fA-F-]{8,}/g;
// Git object ids (40 hex), SHA-256 digests (64 hex) and any longer hex run containing one.
const HEX_RUN = /[0-9a-fA-F]{40,}/g;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Matches the private root only at a path-segment boundary: followed by the end, a `/`, or
 * punctuation that cannot continue the last segment in prose (`/p/root2` is another path).
 */
function privateRootPattern(root: string): RegExp | undefined {
  const trimmed = root.replace(/\/+$/, '');
  if (trimmed.length < 2) return undefined;
  return new RegExp(
    `${escapeRegExp(trimmed)}(?=$|[/\\s'"\`),;:\\]}>!?]|\\.(?:$|[\\s'"\`),;:\\]}>]))`,
    'g',
  );
}

function secretValues(env: NodeJS.ProcessEnv, names: readonly string[] | undefined): string[] {
  const secretNames = names ?? Object.keys(env).filter((name) => SECRET_ENV_NAME.test(name));
  return secretNames
    .map((name) => env[name] ?? '')
    .filter((value) => value.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
}

/** What {@link createScrubber} hides. */
export interface ScrubberInit {
  /** The private root, replaced by `[private]`. */
  privateRoot?: string;
  /** The environment whose secret values are hidden (default `process.env`, read once). */
  env?: NodeJS.ProcessEnv;
  /**
   * The variables of `env` whose values are secrets (the app passes its store drivers'
   * declarations); default: every variable whose name matches {@link SECRET_ENV_NAME}.
   */
  secretEnvVars?: readonly string[];
}

/**
 * Builds the scrubber for one process: the private root it must hide and the secret values of
 * the environment it must hide.
 */
export function createScrubber(init: ScrubberInit = {}): Scrubber {
  const secrets = secretValues(init.env ?? process.env, init.secretEnvVars);
  const rootPattern = init.privateRoot ? privateRootPattern(init.privateRoot) : undefined;

  const credentials = (s: string): string => {
    let out = s;
    for (const secret of secrets) out = out.split(secret).join(REDACTED);
    return out.replace(URL_USER_INFO, `$1${REDACTED}@`).replace(KEY_ID, REDACTED);
  };

  const text = (s: string): string => {
    // The root first: it is matched literally, before other rules rewrite parts of it.
    const out = credentials(rootPattern ? s.replace(rootPattern, PRIVATE_ROOT) : s)
      .replace(PACK_KEY, REDACTED)
      .replace(PROBE_KEY, REDACTED)
      .replace(HEX_RUN, REDACTED);
    // Again, in case a secret value ends in text a replacement put next to it.
    return credentials(out);
  };

  return { text, credentials };
}
