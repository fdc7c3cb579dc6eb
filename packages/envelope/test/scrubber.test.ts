import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildError,
  candidText,
  createScrubber,
  DomainError,
  internalError,
  renderCliError,
} from '../src';

const PRIVATE_ROOT = '/home/agent/.cache/slivingdoc';
const env = {
  AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  AWS_SESSION_TOKEN: 'FwoGZXIvYXdzEBYaDGV4YW1wbGVTZXNzaW9uVG9rZW4=',
};
const scrubber = createScrubber({ privateRoot: PRIVATE_ROOT, env });

describe('scrubber.text', () => {
  it.each([
    ['a git id', `blob ${'0123456789abcdef'.repeat(2)}01234567 missing`, 'blob [redacted] missing'],
    ['a sha-256', `sha256 ${'AB'.repeat(32)}.`, 'sha256 [redacted].'],
    ['a hex run glued to text', `x${'f'.repeat(45)}y`, 'x[redacted]y'],
    ['an access key id', 'key ASIAABCDEFGHIJKLMNOP denied', 'key [redacted] denied'],
    [
      'URL user info',
      'GET http://user:pa55@127.0.0.1:7480/b failed',
      'GET http://[redacted]@127.0.0.1:7480/b failed',
    ],
    [
      'a pack key',
      'fetch slivingdoc/packs/increments/3-0190a5b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b.pack: 404',
      'fetch [redacted]: 404',
    ],
    [
      'a probe key',
      'probe key pfx/probe/0190a5b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b kept',
      'probe key [redacted] kept',
    ],
    ['the secret key', `signed with ${env.AWS_SECRET_ACCESS_KEY}!`, 'signed with [redacted]!'],
    ['the session token', `token=${env.AWS_SESSION_TOKEN}`, 'token=[redacted]'],
    [
      'the private root',
      `cannot write ${PRIVATE_ROOT}/ab12/state.json`,
      'cannot write [private]/ab12/state.json',
    ],
    ['the private root at the end of a sentence', `P is ${PRIVATE_ROOT}.`, 'P is [private].'],
    ['the private root before a colon', `${PRIVATE_ROOT}: disk full`, '[private]: disk full'],
  ])('hides %s', (_what, input, expected) => {
    expect(scrubber.text(input)).toBe(expected);
  });

  it('matches the private root only at a path-segment boundary', () => {
    expect(scrubber.text(`${PRIVATE_ROOT}2/x`)).toBe(`${PRIVATE_ROOT}2/x`);
    expect(scrubber.text(`${PRIVATE_ROOT}.old`)).toBe(`${PRIVATE_ROOT}.old`);
  });

  it('leaves ordinary prose, short hex and short env values alone', () => {
    const quiet = createScrubber({ env: { AWS_ACCESS_KEY_ID: 'ab' } });
    const prose = 'Resolve the conflict in notes/a.md at lines 12-18 (commit deadbeef).';
    expect(quiet.text(prose)).toBe(prose);
  });

  it('reads the secret values from process.env by default', () => {
    const saved = process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = 'process-env-secret-value';
    try {
      expect(createScrubber().text('x process-env-secret-value y')).toBe('x [redacted] y');
    } finally {
      if (saved === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      else process.env.AWS_SECRET_ACCESS_KEY = saved;
    }
  });
});

describe('which environment variables are secret', () => {
  const values = {
    AWS_SECRET_ACCESS_KEY: 'aws-secret-value',
    GCS_HMAC_SECRET: 'gcs-secret-value',
    AZURE_STORAGE_KEY: 'azure-key-value',
    GITHUB_TOKEN: 'github-token-value',
    DB_PASSWORD: 'db-password-value',
    GOOGLE_APPLICATION_CREDENTIALS: '/etc/gcs-credentials.json',
    SLIVINGDOC_BUCKET: 'bucket-name-value',
    HOME: '/home/agent',
  };
  const all = Object.values(values).join(' ');

  it('hides exactly the variables it is given', () => {
    const s = createScrubber({ env: values, secretEnvVars: ['GCS_HMAC_SECRET', 'UNSET_NAME'] });
    expect(s.text(all)).toBe(all.replace('gcs-secret-value', '[redacted]'));
    expect(s.credentials('gcs-secret-value')).toBe('[redacted]');
  });

  it('hides none by name when given none', () => {
    expect(createScrubber({ env: values, secretEnvVars: [] }).text(all)).toBe(all);
  });

  it('without a list, hides every variable whose name says it holds a secret', () => {
    expect(createScrubber({ env: values }).text(all)).toBe(
      '[redacted] [redacted] [redacted] [redacted] [redacted] [redacted] bucket-name-value /home/agent',
    );
  });
});

describe('scrubber.credentials (log causes)', () => {
  it('hides credentials but keeps ids and paths for operators', () => {
    const cause = `PUT http://k:s@h/b/${PRIVATE_ROOT}/${'a'.repeat(40)} as AKIAIOSFODNN7EXAMPLE with ${env.AWS_SECRET_ACCESS_KEY}`;
    expect(scrubber.credentials(cause)).toBe(
      `PUT http://[redacted]@h/b/${PRIVATE_ROOT}/${'a'.repeat(40)} as [redacted] with [redacted]`,
    );
  });
});

// ---- properties -------------------------------------------------------------------------

const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
const hexRun = (n: number) => fc.string({ unit: hexChar, minLength: n, maxLength: n });
const upperAlnum = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const keyId = fc
  .tuple(
    fc.constantFrom('AKIA', 'ASIA'),
    fc.string({ unit: upperAlnum, minLength: 16, maxLength: 16 }),
  )
  .map(([p, rest]) => p + rest);
const base64ish = fc.constantFrom(
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=',
);
const secretValue = fc.string({ unit: base64ish, minLength: 8, maxLength: 48 });
// fc.domain() is slow enough to dominate the run; a plain host grammar covers the scrubber.
const chars = (set: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...set), minLength, maxLength });
const host = fc
  .tuple(chars('abcdefghijklmnopqrstuvwxyz0123456789', 1, 10), fc.constantFrom('', '.org', ':7480'))
  .map(([name, tail]) => name + tail);
const userInfoUrl = fc
  .tuple(
    fc.constantFrom('http', 'https', 's3'),
    chars('abcdefghijklmnopqrstuvwxyz0123456789:%._-', 1, 12),
    host,
  )
  .map(([scheme, info, hostname]) => `${scheme}://${info}@${hostname}/x`);
const segment = chars('abcdefghijklmnopqrstuvwxyz0123456789._-', 1, 10).filter(
  (s) => s !== '.' && s !== '..',
);
const privateRoot = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
const separator = fc.constantFrom(' ', '\n', ': ', ', ', ' (', ') ', '"', "'", '\t');

/** A cause text that mixes arbitrary prose with every kind of secret, at any position. */
const hostileText = (root: string, secrets: string[]) =>
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.string({ maxLength: 20 }),
          fc.string({ unit: 'binary', maxLength: 10 }),
          hexRun(40),
          hexRun(64),
          keyId,
          userInfoUrl,
          fc.constantFrom(...secrets),
          fc.constant(root),
          segment.map((s) => `${root}/${s}`),
        ),
        separator,
      ),
      { maxLength: 12 },
    )
    .map((pairs) => pairs.map(([part, sep]) => part + sep).join(''));

const HEX40 = /[0-9a-fA-F]{40}/;
const KEY_ID = /(?:AKIA|ASIA)[A-Z0-9]{16}/;
const USER_INFO = /[a-zA-Z][a-zA-Z0-9+.-]*:\/\/(?!\[redacted\]@)[^\s/?#@]*@/;

function containsRootAtBoundary(text: string, root: string): boolean {
  let from = text.indexOf(root);
  while (from !== -1) {
    const next = text[from + root.length];
    if (next === undefined || /[/\s'"`),;:\]}>!?]/.test(next)) return true;
    from = text.indexOf(root, from + 1);
  }
  return false;
}

function assertClean(text: string, root: string, secrets: string[]): void {
  // Plain checks first: expect() per line is what made this property slow.
  const leaks =
    HEX40.test(text) ||
    KEY_ID.test(text) ||
    USER_INFO.test(text) ||
    secrets.some((secret) => text.includes(secret)) ||
    containsRootAtBoundary(text, root);
  if (leaks) expect.fail(`leaked: ${JSON.stringify(text)}`);
}

// Generation dominates these tests' time and the machine is shared: the timeout is a safety
// net for a loaded machine, never an assertion about speed.
describe('scrubber properties', { timeout: 60_000 }, () => {
  /** A private root, three planted secret values, and a hostile text built from them. */
  const scenario = fc
    .tuple(privateRoot, fc.tuple(secretValue, secretValue, secretValue))
    .chain(([root, secrets]) =>
      fc.record({
        root: fc.constant(root),
        secrets: fc.constant(secrets),
        text: hostileText(root, secrets),
        hexName: fc.string({ unit: hexChar, minLength: 40, maxLength: 70 }),
      }),
    );

  it('no diagnostic text keeps a hex run, key id, user info, secret value or the private root', () => {
    fc.assert(
      fc.property(scenario, ({ root, secrets, text, hexName }) => {
        const [access, secret, token] = secrets;
        const s = createScrubber({
          privateRoot: root,
          env: {
            AWS_ACCESS_KEY_ID: access,
            AWS_SECRET_ACCESS_KEY: secret,
            AWS_SESSION_TOKEN: token,
          },
        });
        const path = `notes/${hexName}.md`;
        const error = buildError(
          new DomainError({
            code: 'INVALID_CONTENT',
            reason: 'UNSUPPORTED_FILES',
            message: text,
            files: [{ path, reason: 'NOT_UTF8', ranges: [] }],
          }),
          { diagnosticId: '0011223344556677', sets: { readOnly: [], writable: [] }, scrubber: s },
        );
        const prose = (rendered: string) =>
          rendered.split('\n').filter((line) => !line.startsWith('file: '));
        for (const line of [
          error.message,
          ...prose(candidText(error, { readOnly: [], writable: [] })),
          ...prose(renderCliError(error, { color: false })),
        ])
          assertClean(line, root, secrets);
        // Structured data comes back exactly as given.
        expect(error.files[0]?.path).toBe(path);
      }),
      { numRuns: 150 },
    );
  });

  it('credentials() leaves no secret, key id or user info in a log cause', () => {
    fc.assert(
      fc.property(scenario, ({ secrets, text }) => {
        const [access, secret, token] = secrets;
        const out = createScrubber({
          env: {
            AWS_ACCESS_KEY_ID: access,
            AWS_SECRET_ACCESS_KEY: secret,
            AWS_SESSION_TOKEN: token,
          },
        }).credentials(text);
        expect(out).not.toMatch(KEY_ID);
        expect(out).not.toMatch(USER_INFO);
        for (const value of secrets) expect(out).not.toContain(value);
      }),
      { numRuns: 150 },
    );
  });

  it('text without anything secret passes through unchanged', () => {
    const s = createScrubber({ privateRoot: PRIVATE_ROOT, env });
    fc.assert(
      fc.property(fc.stringMatching(/^[a-zA-Z .,;:!?()'"\n-]{0,80}$/), (prose) => {
        expect(s.text(prose)).toBe(prose);
      }),
    );
  });

  it('an internal error’s message never carries its cause', () => {
    fc.assert(
      fc.property(fc.string(), (cause) => {
        const error = buildError(internalError(new Error(cause)), {
          diagnosticId: '0011223344556677',
          sets: { readOnly: [], writable: [] },
          scrubber,
        });
        expect(cause.length < 8 || !error.message.includes(cause)).toBe(true);
      }),
    );
  });
});
