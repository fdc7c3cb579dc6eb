import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addToken,
  defaultTokenFilePath,
  listTokens,
  openTokenFile,
  removeToken,
  TokenFileError,
} from '../src/index';

const freshFile = () => join(mkdtempSync(join(tmpdir(), 'sld-tokens-')), 'cfg', 'tokens.json');

describe('defaultTokenFilePath', () => {
  it('uses an absolute XDG_CONFIG_HOME', () => {
    expect(defaultTokenFilePath({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/u')).toBe(
      '/x/cfg/slivingdoc/tokens.json',
    );
  });
  it('falls back to ~/.config when XDG_CONFIG_HOME is unset or relative', () => {
    expect(defaultTokenFilePath({}, '/home/u')).toBe('/home/u/.config/slivingdoc/tokens.json');
    expect(defaultTokenFilePath({ XDG_CONFIG_HOME: 'rel' }, '/home/u')).toBe(
      '/home/u/.config/slivingdoc/tokens.json',
    );
  });
});

describe('the token file', () => {
  it('refuses a name already there, and one that differs from it only in case', () => {
    const file = freshFile();
    addToken(file, 'alice');
    expect(() => addToken(file, 'alice')).toThrow(/"alice" already exists \(remove it first\)/);
    expect(() => addToken(file, 'ALICE')).toThrow(
      /"alice" already exists, and "ALICE" differs from it only in case/,
    );
    expect(listTokens(file).map((token) => token.name)).toEqual(['alice']);
    // Removed, the name (in any case) is free again.
    expect(removeToken(file, 'alice')).toBe(true);
    addToken(file, 'Alice');
    expect(listTokens(file).map((token) => token.name)).toEqual(['Alice']);
  });

  it('stores only a hash, in a 0600 file, and verifies the printed token', () => {
    const file = freshFile();
    const token = addToken(file, 'alice', { writable: ['docs'] });
    expect(token).toMatch(/^sld_[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).not.toContain(token);
    expect(readFileSync(file, 'utf8')).not.toContain(token.slice(4));
    const tokens = openTokenFile(file);
    expect(tokens.verify(token)).toEqual({ name: 'alice', readOnly: false, writable: ['docs'] });
    expect(tokens.size()).toBe(1);
  });

  it('refuses wrong, truncated, extended and absent tokens', () => {
    const file = freshFile();
    const token = addToken(file, 'alice');
    const tokens = openTokenFile(file);
    expect(tokens.verify(undefined)).toBeUndefined();
    expect(tokens.verify('')).toBeUndefined();
    expect(tokens.verify(token.slice(0, -1))).toBeUndefined();
    expect(tokens.verify(`${token}x`)).toBeUndefined();
    expect(tokens.verify(token.toUpperCase())).toBeUndefined();
  });

  it('gives each token its own grant', () => {
    const file = freshFile();
    const a = addToken(file, 'alice');
    const b = addToken(file, 'bob', { readOnly: true, readOnlyPaths: ['x/**'] });
    const tokens = openTokenFile(file);
    expect(tokens.verify(a)?.name).toBe('alice');
    expect(tokens.verify(b)).toEqual({ name: 'bob', readOnly: true, readOnlyPaths: ['x/**'] });
  });

  it('sees tokens added and removed after it was opened, without a restart', () => {
    const file = freshFile();
    const tokens = openTokenFile(file);
    expect(tokens.size()).toBe(0);
    const token = addToken(file, 'alice');
    expect(tokens.verify(token)?.name).toBe('alice');
    expect(removeToken(file, 'alice')).toBe(true);
    expect(tokens.verify(token)).toBeUndefined();
    expect(tokens.size()).toBe(0);
  });

  it('refuses a second token of the same name and says so', () => {
    const file = freshFile();
    addToken(file, 'alice');
    expect(() => addToken(file, 'alice')).toThrow(TokenFileError);
    expect(() => addToken(file, '')).toThrow(TokenFileError);
  });

  it('lists grants without secrets or hashes', () => {
    const file = freshFile();
    addToken(file, 'alice', { readOnly: true });
    const listed = listTokens(file);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ name: 'alice', readOnly: true });
    expect(Object.keys(listed[0]!).sort()).toEqual(['created', 'name', 'readOnly']);
    expect(removeToken(file, 'nobody')).toBe(false);
  });

  it('refuses a file other users can read, at open, and grants nothing when it turns so', () => {
    const file = freshFile();
    const token = addToken(file, 'alice');
    chmodSync(file, 0o644);
    expect(() => openTokenFile(file)).toThrow(/open to other users/);
    chmodSync(file, 0o600);
    const problems: string[] = [];
    const tokens = openTokenFile(file, { onProblem: (error) => problems.push(error.message) });
    expect(tokens.verify(token)?.name).toBe('alice');
    chmodSync(file, 0o640);
    expect(tokens.verify(token)).toBeUndefined();
    expect(problems).toHaveLength(1);
  });

  it('refuses a file that is not a token file, and grants nothing after a bad edit', () => {
    const file = freshFile();
    const token = addToken(file, 'alice');
    const tokens = openTokenFile(file);
    writeFileSync(file, '{"version":1,"tokens":[{"name":"x"}]}', { mode: 0o600 });
    expect(tokens.verify(token)).toBeUndefined();
    expect(() => openTokenFile(file)).toThrow(/malformed entry/);
    writeFileSync(file, 'not json', { mode: 0o600 });
    expect(() => openTokenFile(file)).toThrow(/not JSON/);
  });
});
