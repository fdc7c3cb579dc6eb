import { describe, expect, it } from 'vitest';
import { checkMessage, PolicyError, parseRequestPath } from '../src/index';

const env = { home: '/home/agent' };

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof PolicyError) return error.reason;
    throw error;
  }
  return undefined;
}

describe('parseRequestPath', () => {
  it('maps omitted and empty to the notebook directory', () => {
    expect(parseRequestPath(undefined, env)).toBeUndefined();
    expect(parseRequestPath('', env)).toBeUndefined();
  });

  it('expands ~/ to the home directory', () => {
    expect(parseRequestPath('~/notes', env)).toBe('/home/agent/notes');
    expect(parseRequestPath('~/', env)).toBe('/home/agent');
  });

  it('cleans lexically', () => {
    expect(parseRequestPath('/w/./a//b/../c/', env)).toBe('/w/a/c');
    expect(parseRequestPath('/w/..', env)).toBe('/');
    expect(parseRequestPath('/', env)).toBe('/');
  });

  it.each([
    ['relative', 'notes'],
    ['~user', '~user/notes'],
    ['bare ~', '~'],
    ['NUL byte', '/w/a\u0000b'],
    ['lone surrogate', '/w/\udc00'],
    ['4,097 bytes', `/${'a'.repeat(4096)}`],
  ])('refuses %s as PATH_INVALID', (_name, raw) => {
    expect(reasonOf(() => parseRequestPath(raw, env))).toBe('PATH_INVALID');
  });

  it('accepts exactly 4,096 bytes', () => {
    const raw = `/${'a'.repeat(200)}/`.repeat(20) + 'b'.repeat(4096 - 20 * 202);
    expect(Buffer.byteLength(raw)).toBe(4096);
    expect(parseRequestPath(raw, env)).toBe(raw.replace(/\/\//g, '/'));
  });

  it('checks bytes after ~/ expansion', () => {
    const rest = 'a'.repeat(4096 - '/home/agent/'.length);
    expect(parseRequestPath(`~/${rest}`, env)).toBe(`/home/agent/${rest}`);
    expect(reasonOf(() => parseRequestPath(`~/${rest}a`, env))).toBe('PATH_INVALID');
  });

  it('counts bytes, not characters', () => {
    const raw = `/${'é'.repeat(2048)}`; // 4,097 bytes, 2,049 characters
    expect(reasonOf(() => parseRequestPath(raw, env))).toBe('PATH_INVALID');
  });
});

describe('checkMessage', () => {
  it.each(['fix typo', ' x ', '\u200b', '\ufeff', 'a\u0000'.slice(0, 1), 'é'.repeat(8192)])(
    'accepts %j',
    (message) => {
      expect(reasonOf(() => checkMessage(message))).toBeUndefined();
    },
  );

  it.each([
    ['empty', ''],
    ['spaces and tabs', ' \t\r\n'],
    ['NEL (U+0085)', '\u0085'],
    ['ideographic space (U+3000)', '\u3000\u3000'],
    ['line and paragraph separators', '\u2028\u2029'],
    ['U+0000', 'fix\u0000'],
    ['lone surrogate', 'fix \ud800'],
    ['16,385 bytes', `${'é'.repeat(8192)}a`],
  ])('refuses %s as MESSAGE_INVALID', (_name, message) => {
    expect(reasonOf(() => checkMessage(message))).toBe('MESSAGE_INVALID');
  });
});
