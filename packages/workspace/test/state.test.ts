import { lstat, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  decodeState,
  decodeTarget,
  encodeState,
  encodeTarget,
  openPrivateState,
  privateStateKey,
  StateError,
  type StateV1,
} from '../src/index';
import { tempDir } from './helpers';

const head = 'a'.repeat(40);
const tree = 'b'.repeat(40);
const valid: StateV1 = {
  version: 1,
  identity: 'embedded /store slivingdoc',
  remoteGeneration: 18n,
  baselineHead: head,
  baselineTree: tree,
  recoveryRequired: false,
};
const validText = `{"version":1,"identity":"embedded /store slivingdoc","remoteGeneration":18,"baselineHead":"${head}","baselineTree":"${tree}","recoveryRequired":false}`;

describe('state.json v1 codec', () => {
  it('encodes compactly in the fixed field order and decodes back', () => {
    expect(encodeState(valid)).toBe(validText);
    expect(decodeState(validText)).toEqual(valid);
    expect(decodeState(` \n${validText}\n`)).toEqual(valid);
  });

  it('keeps a 64-bit generation exact and accepts an empty head (no remote head yet)', () => {
    const big = { ...valid, remoteGeneration: 2n ** 63n - 1n, baselineHead: '' };
    expect(decodeState(encodeState(big))).toEqual(big);
  });

  const swap = (from: string, to: string) => validText.replace(from, to);
  it.each<[string, string, string]>([
    ['syntax', 'not JSON', '{"version":1,'],
    ['syntax', 'empty file', ''],
    ['wrong-type', 'an array', '[]'],
    ['wrong-type', 'null document', 'null'],
    ['missing-field', 'empty object', '{}'],
    [
      'unknown-field',
      'unknown field',
      swap('"recoveryRequired":false', '"recoveryRequired":false,"extra":1'),
    ],
    ['duplicate-field', 'duplicate field', swap('"version":1,', '"version":1,"version":1,')],
    ['missing-field', 'missing field', swap(',"recoveryRequired":false', '')],
    ['null-field', 'null field', swap('"recoveryRequired":false', '"recoveryRequired":null')],
    [
      'null-field',
      'null identity',
      swap('"identity":"embedded /store slivingdoc"', '"identity":null'),
    ],
    ['wrong-type', 'string generation', swap('"remoteGeneration":18', '"remoteGeneration":"18"')],
    ['wrong-type', 'number flag', swap('"recoveryRequired":false', '"recoveryRequired":0')],
    ['wrong-type', 'object head', swap(`"baselineHead":"${head}"`, '"baselineHead":{"a":"}"}')],
    ['wrong-type', 'array tree', swap(`"baselineTree":"${tree}"`, '"baselineTree":[1]')],
    [
      'invalid-value',
      'negative generation',
      swap('"remoteGeneration":18', '"remoteGeneration":-1'),
    ],
    [
      'invalid-value',
      'fractional generation',
      swap('"remoteGeneration":18', '"remoteGeneration":1.5'),
    ],
    [
      'invalid-value',
      'exponent generation',
      swap('"remoteGeneration":18', '"remoteGeneration":1e3'),
    ],
    [
      'invalid-value',
      'generation over 2^63-1',
      swap('"remoteGeneration":18', `"remoteGeneration":${2n ** 63n}`),
    ],
    [
      'invalid-value',
      'upper-case head',
      swap(`"baselineHead":"${head}"`, `"baselineHead":"${'A'.repeat(40)}"`),
    ],
    ['invalid-value', 'short tree', swap(`"baselineTree":"${tree}"`, '"baselineTree":"abc"')],
    ['invalid-value', 'empty tree id', swap(`"baselineTree":"${tree}"`, '"baselineTree":""')],
    [
      'invalid-value',
      'empty identity',
      swap('"identity":"embedded /store slivingdoc"', '"identity":""'),
    ],
    ['unsupported-version', 'version 2', swap('"version":1', '"version":2')],
    [
      'field-order',
      'fields out of order',
      `{"identity":"x","version":1,"remoteGeneration":1,"baselineHead":"","baselineTree":"${tree}","recoveryRequired":true}`,
    ],
  ])('refuses %s: %s', (kind, _name, text) => {
    let caught: unknown;
    try {
      decodeState(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StateError);
    expect((caught as StateError).kind).toBe(kind);
  });
});

describe('openPrivateState', () => {
  let root: { path: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    root = await tempDir('ws-state-');
  });
  afterEach(async () => {
    await root.cleanup();
  });

  const open = (notebookDir = '/w/notebook', storageIdentity = 'embedded /store slivingdoc') =>
    openPrivateState({ privateRoot: join(root.path, 'private'), notebookDir, storageIdentity });

  it('derives P from a length-prefixed encoding of L and the storage identity', async () => {
    expect(privateStateKey('/a', 'bc')).not.toBe(privateStateKey('/ab', 'c'));
    expect(privateStateKey('/a', 'b')).toMatch(/^[0-9a-f]{64}$/);
    const one = await open('/w/a', 's3 one');
    const two = await open('/w/a', 's3 two');
    const three = await open('/w/b', 's3 one');
    expect(new Set([one.dir, two.dir, three.dir]).size).toBe(3);
    expect(one.dir).toBe(join(root.path, 'private/notebooks', privateStateKey('/w/a', 's3 one')));
    expect((await open('/w/a', 's3 one')).dir).toBe(one.dir);
  });

  it('creates directories 0700 and writes state.json 0600 with nothing left behind', async () => {
    const p = await open();
    expect(await p.readState()).toBeUndefined();
    await p.writeState(valid);
    expect(await p.readState()).toEqual(valid);
    await p.writeState({ ...valid, recoveryRequired: true, remoteGeneration: 19n });
    expect((await p.readState())?.recoveryRequired).toBe(true);
    for (const dir of [
      join(root.path, 'private'),
      join(root.path, 'private/notebooks'),
      p.dir,
      p.gitdir,
    ]) {
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
    }
    expect((await stat(join(p.dir, 'state.json'))).mode & 0o777).toBe(0o600);
    expect((await readdir(p.dir)).sort()).toEqual(['git', 'state.json']);
  });

  it('refuses a corrupt state.json with StateError and leaves it in place', async () => {
    const p = await open();
    await writeFile(join(p.dir, 'state.json'), '{"version":1}');
    await expect(p.readState()).rejects.toMatchObject({
      name: 'StateError',
      kind: 'missing-field',
    });
    expect(await readFile(join(p.dir, 'state.json'), 'utf8')).toBe('{"version":1}');
  });

  it('refuses a state recorded for another store', async () => {
    const p = await open();
    await writeFile(join(p.dir, 'state.json'), encodeState({ ...valid, identity: 'other' }));
    await expect(p.readState()).rejects.toMatchObject({ kind: 'identity-mismatch' });
  });

  it('refuses to write an invalid state', async () => {
    const p = await open();
    await expect(p.writeState({ ...valid, baselineTree: 'nope' })).rejects.toBeInstanceOf(
      StateError,
    );
    expect(await lstat(join(p.dir, 'state.json')).catch(() => undefined)).toBeUndefined();
  });

  it('persists the stat cache in P as 0600', async () => {
    const p = await open();
    p.statCache.set('a.md', { size: 1, mtimeNs: 1n, ctimeNs: 1n, ino: 1, dev: 1 }, 'id');
    await p.statCache.save();
    expect((await stat(join(p.dir, 'stat-cache.json'))).mode & 0o777).toBe(0o600);
    const again = await open();
    expect(again.statCache.get('a.md', { size: 1, mtimeNs: 1n, ctimeNs: 1n, ino: 1, dev: 1 })).toBe(
      'id',
    );
  });
});

describe('target.json (what a rewrite of L is writing)', () => {
  const oid = (c: string) => c.repeat(40);
  const target = {
    previous: { generation: 2n ** 63n - 1n, head: oid('a'), tree: oid('b') },
    rewrites: [
      { next: { generation: 0n, head: '', tree: oid('c') }, changes: new Map() },
      {
        next: { generation: 7n, head: oid('e'), tree: oid('f') },
        changes: new Map<string, string | null>([
          ['notes/a.md', oid('d')],
          ['gone.md', null],
        ]),
      },
    ],
  };

  it('round-trips, 64-bit generations included', () => {
    expect(decodeTarget(encodeTarget(target))).toEqual(target);
  });

  it.each([
    'not json',
    '{}',
    '{"version":2,"previous":{},"rewrites":[]}',
    '{"version":1,"previous":{"generation":"1","head":"","tree":"x"},"rewrites":[]}',
    encodeTarget(target).replace('"gone.md",null', '"gone.md",7'),
    encodeTarget(target).replace(`"${oid('b')}"`, '"xyz"'),
    encodeTarget(target).replace('"generation":"0"', '"generation":0'),
  ])('rejects a malformed record with StateError: %s', (text) => {
    expect(() => decodeTarget(text)).toThrow(StateError);
  });
});
