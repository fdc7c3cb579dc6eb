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
const userInfoUrl = fc
  .tuple(
    fc.constantFrom('http', 'https', 's3'),
    fc.stringMatching(/^[a-z0-9:%._-]{1,12}$/),
    fc.domain(),
  )
  .map(([scheme, info, host]) => `${scheme}://${info}@${host}/x`);
const segment = fc.stringMatching(/^[a-z0-9._-]{1,10}$/).filter((s) => s !== '.' && s !== '..');
const privateRoot = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
const separator = fc.constantFrom(' ', '\n', ': ', ', ', ' (', ') ', '"', "'", '\t');

/** A cause text that mixes arbitrary prose with every kind of secret, at any position. */
const hostileText = (root: string, secrets: string[]) =>
  fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.string({ unit: 'binary', maxLength: 10 }),
        hexRun(40),
        hexRun(64),
        keyId,
        userInfoUrl,
        fc.constantFrom(...secrets),
        fc.constant(root),
        fc.tuple(fc.constant(root), segment).map(([r, s]) => `${r}/${s}`),
      ),
      { maxLength: 12 },
    )
    .chain((parts) =>
      fc
        .array(separator, { minLength: parts.length, maxLength: parts.length })
        .map((seps) => parts.map((p, i) => p + seps[i]).join('')),
    );

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
  expect(text).not.toMatch(HEX40);
  expect(text).not.toMatch(KEY_ID);
  expect(text).not.toMatch(USER_INFO);
  for (const secret of secrets) expect(text).not.toContain(secret);
  expect(containsRootAtBoundary(text, root)).toBe(false);
}

describe('scrubber properties', () => {
  it('no diagnostic text keeps a hex run, key id, user info, secret value or the private root', () => {
    fc.assert(
      fc.property(
        privateRoot,
        fc.tuple(secretValue, secretValue, secretValue),
        fc.context(),
        (root, [access, secret, token], ctx) => {
          const env = {
            AWS_ACCESS_KEY_ID: access,
            AWS_SECRET_ACCESS_KEY: secret,
            AWS_SESSION_TOKEN: token,
          };
          const secrets = [access, secret, token];
          const s = createScrubber({ privateRoot: root, env });
          fc.assert(
            fc.property(
              hostileText(root, secrets),
              fc.string({ unit: hexChar, minLength: 40, maxLength: 70 }),
              (message, hexName) => {
                ctx.log(message);
                const path = `notes/${hexName}.md`;
                const error = buildError(
                  new DomainError({
                    code: 'INVALID_CONTENT',
                    reason: 'UNSUPPORTED_FILES',
                    message,
                    files: [{ path, reason: 'NOT_UTF8', ranges: [] }],
                  }),
                  {
                    diagnosticId: '0011223344556677',
                    sets: { readOnly: [], writable: [] },
                    scrubber: s,
                  },
                );
                assertClean(error.message, root, secrets);
                const prose = candidText(error, { readOnly: [], writable: [] })
                  .split('\n')
                  .filter((line) => !line.startsWith('file: '));
                for (const line of prose) assertClean(line, root, secrets);
                const report = renderCliError(error, { color: false })
                  .split('\n')
                  .filter((line) => !line.startsWith('file: '));
                for (const line of report) assertClean(line, root, secrets);
                // Structured data comes back exactly as given.
                expect(error.files[0]?.path).toBe(path);
              },
            ),
            { numRuns: 15 },
          );
        },
      ),
      { numRuns: 15 },
    );
  });

  it('credentials() leaves no secret, key id or user info in a log cause', () => {
    fc.assert(
      fc.property(privateRoot, secretValue, (root, secret) => {
        const s = createScrubber({ env: { AWS_SECRET_ACCESS_KEY: secret } });
        fc.assert(
          fc.property(hostileText(root, [secret]), (cause) => {
            const out = s.credentials(cause);
            expect(out).not.toMatch(KEY_ID);
            expect(out).not.toMatch(USER_INFO);
            expect(out).not.toContain(secret);
          }),
          { numRuns: 15 },
        );
      }),
      { numRuns: 15 },
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
