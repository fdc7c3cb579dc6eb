/**
 * Every envelope code a caller can provoke from outside, produced through the MCP tools of the
 * built `slivingdoc serve` (the MCP SDK client over real stdio; one raw JSON-RPC line for the
 * duplicate key the SDK cannot send) and checked completely: code, reason, the catalogue's
 * action and retryable verdict, files, the candid text line by line and both path-set arrays
 * (helpers/mcp-server.ts). Servers are shared by groups of cases to keep the run short.
 *
 * How the harder ones are reached, all deterministically:
 * - PATH_BUSY and REMOTE_BUSY: a server armed with `after-pack-upload=pause` holds its commit
 *   (and the directory's lock) after uploading its pack and before its compare-and-swap; a
 *   second server on the same directory and private root waits out the lock; a human CLI
 *   commit from another host (its own publication gate) wins the race; SIGUSR2 then lets the
 *   held commit lose it with --commit-retries 0.
 * - STORAGE_FAILURE: the real S3 server behind the reliability fault proxy (500s for
 *   STORE_ERROR; the proxy closed after startup for STORE_UNREACHABLE; a lost CAS answer with
 *   the store failing every read afterwards for PUBLICATION_UNPROVEN); ACCESS_DENIED through an
 *   embedded store whose temp directory refuses writes.
 * - STORAGE_INTEGRITY: the embedded store's files edited on disk (`current` overwritten by a
 *   newer version file, a pack's bytes changed, a pack deleted, `current` deleted); for
 *   MISSING_OBJECT and INVALID_REMOTE_CONTENT a hand-made head planted in an empty store
 *   (helpers/planted-store.ts: objects and pack by real git, pack and `current` uploaded through
 *   the store package with a matching descriptor).
 * - RECOVERY_FAILURE: engine failpoints (SLIVINGDOC_FAILPOINTS) fail the rewrite of L and its
 *   repair (UNEXPECTED_FAILURE); with the flag left, the store failing every read of `current`
 *   (a directory in place of its newest version file) keeps the repair pending (RESYNC_PENDING).
 * - ENGINE_FAILED: private state or a parent directory in L that refuses writes; a failpoint
 *   before L changes for INTERNAL_ERROR.
 *
 * A directory "refuses writes" through its immutable attribute (`chattr +i`) when the tests
 * run as root — root ignores permission bits — and through mode 0500 otherwise.
 *
 * Not produced here, and why: the ENGINE_FAILED details other than `permission denied` and
 * `file name too long` (disk full, read-only file system, too many open files, out of memory)
 * need a full or read-only mount or starved process limits, which a test cannot arrange
 * deterministically without privileges it should not need.
 * A refused write to L after the rewrite began is RECOVERY_FAILURE by design (contract §10), so
 * LOCAL_WRITE_FAILED comes only from a notebook directory that cannot be created.
 * The file reason FILE_DIRECTORY is not asserted: a file/directory conflict today ends in
 * RECOVERY_FAILURE · UNEXPECTED_FAILURE on every call (the engine's materialize writes the
 * first half of its changes, all writes, before the deletion that clears the way), reported.
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { FAILPOINT_RESUME_SIGNAL } from '@slivingdoc/engine';
import { startFaultProxy } from '@slivingdoc/testkit/fault-proxy';
import { refuseWrites } from '@slivingdoc/testkit/refuse-writes';
import { providedS3 } from '@slivingdoc/testkit/s3-env';
import { untilCatching } from '@slivingdoc/testkit/signal-wait';
import { until } from '@slivingdoc/testkit/until';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { assertBuilt, runBin, sandboxEnv } from './helpers/bin';
import { expectEnvelope, McpServerProcess } from './helpers/mcp-server';
import { type PlantedHead, plantHead } from './helpers/planted-store';
import { RawServer } from './helpers/raw-server';

beforeAll(assertBuilt);
const running: { close(): Promise<void> | void }[] = [];
afterAll(async () => {
  for (const server of running.splice(0)) await server.close();
});

/** A sandbox with an explicit workspace root `ws`; its store and private state stay apart. */
function sandbox(extra: NodeJS.ProcessEnv = {}) {
  const env = sandboxEnv(extra);
  const ws = join(realpathSync(env.HOME!), 'ws');
  mkdirSync(ws);
  return { env, ws };
}

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<McpServerProcess> {
  const server = await McpServerProcess.start(args, env);
  running.push(server);
  return server;
}

describe('INVALID_REQUEST, INVALID_CONTENT and CONTENT_CONFLICT through one server', () => {
  let server: McpServerProcess;
  let ws: string;
  beforeAll(async () => {
    const box = sandbox();
    ws = box.ws;
    server = await serve(['--workspace-root', ws], box.env);
  });

  it('INVALID_ARGUMENTS: unknown field, explicit null, wrong type, missing message', async () => {
    for (const args of [{ extra: 1 }, { path: null }, { path: 5 }, { path: ['a'] }]) {
      expectEnvelope(await server.call('notes_pull', args), {
        code: 'INVALID_REQUEST',
        reason: 'INVALID_ARGUMENTS',
      });
    }
    for (const args of [{}, { message: null }, { message: 7 }, { message: 'm', path: 'x', y: 1 }]) {
      expectEnvelope(await server.call('notes_commit', args), {
        code: 'INVALID_REQUEST',
        reason: 'INVALID_ARGUMENTS',
      });
    }
  });

  it('PATH_INVALID: relative, over 4,096 bytes, a lone surrogate', async () => {
    for (const path of ['relative/dir', `/${'é'.repeat(2048)}`, `${ws}/\uD800`]) {
      expectEnvelope(await server.call('notes_pull', { path }), {
        code: 'INVALID_REQUEST',
        reason: 'PATH_INVALID',
      });
    }
  });

  it('PATH_OUTSIDE_ROOT, PATH_NOT_DIRECTORY, PATH_SYMLINK', async () => {
    for (const path of ['/', `${ws}/../elsewhere`]) {
      expectEnvelope(await server.call('notes_pull', { path }), {
        code: 'INVALID_REQUEST',
        reason: 'PATH_OUTSIDE_ROOT',
      });
    }
    writeFileSync(join(ws, 'a-file'), 'x');
    expectEnvelope(await server.call('notes_pull', { path: join(ws, 'a-file') }), {
      code: 'INVALID_REQUEST',
      reason: 'PATH_NOT_DIRECTORY',
    });
    mkdirSync(join(ws, 'real'));
    symlinkSync(join(ws, 'real'), join(ws, 'link'));
    for (const path of [join(ws, 'link'), join(ws, 'link', 'below')]) {
      expectEnvelope(await server.call('notes_pull', { path }), {
        code: 'INVALID_REQUEST',
        reason: 'PATH_SYMLINK',
      });
    }
  });

  it('MESSAGE_INVALID: blank in Unicode white space, U+0000, over 16,384 bytes, lone surrogate', async () => {
    const path = join(ws, 'msg');
    for (const message of [' \t\n', '\u3000\u0085', 'a\u0000b', 'é'.repeat(8193), 'x\uDC00']) {
      expectEnvelope(await server.call('notes_commit', { message, path }), {
        code: 'INVALID_REQUEST',
        reason: 'MESSAGE_INVALID',
      });
    }
  });

  it('NOT_PULLED: a commit before any pull creates nothing', async () => {
    const path = join(ws, 'never-pulled');
    expectEnvelope(await server.call('notes_commit', { message: 'm', path }), {
      code: 'INVALID_REQUEST',
      reason: 'NOT_PULLED',
    });
    expect(readdirSync(ws)).not.toContain('never-pulled');
  });

  it('NESTED_NOTEBOOK: inside, or containing, a managed directory', async () => {
    const managed = join(ws, 'nest', 'managed');
    expect((await server.call('notes_pull', { path: managed })).structured.code).toBe('OK');
    for (const path of [join(managed, 'inner'), join(ws, 'nest')]) {
      expectEnvelope(await server.call('notes_pull', { path }), {
        code: 'INVALID_REQUEST',
        reason: 'NESTED_NOTEBOOK',
      });
    }
  });

  it('INVALID_CONTENT · UNSUPPORTED_FILES with one reason per file, sorted by path bytes', async () => {
    const dir = join(ws, 'content');
    expect((await server.call('notes_pull', { path: dir })).structured.code).toBe('OK');
    writeFileSync(join(dir, 'fine.md'), 'fine\n');
    writeFileSync(join(dir, 'latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    writeFileSync(join(dir, 'with-nul.md'), 'a\u0000b\n');
    symlinkSync('fine.md', join(dir, 'link.md'));
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    writeFileSync(join(dir, 'bad:name.md'), 'x\n');
    writeFileSync(join(dir, 'huge.md'), '');
    truncateSync(join(dir, 'huge.md'), 64 * 1024 * 1024 + 1); // sparse: cheap to make
    const result = await server.call('notes_pull', { path: dir });
    expectEnvelope(result, {
      code: 'INVALID_CONTENT',
      reason: 'UNSUPPORTED_FILES',
      files: [
        { path: 'bad:name.md', reason: 'INVALID_NAME', ranges: [] },
        { path: 'huge.md', reason: 'FILE_TOO_LARGE', ranges: [] },
        { path: 'latin1.md', reason: 'NOT_UTF8', ranges: [] },
        { path: 'link.md', reason: 'SYMLINK', ranges: [] },
        { path: 'pipe', reason: 'SPECIAL_FILE', ranges: [] },
        { path: 'with-nul.md', reason: 'CONTAINS_NUL', ranges: [] },
      ],
    });
    // Nothing was lost: every file is still there.
    expect(readdirSync(dir).sort()).toEqual(
      ['bad:name.md', 'fine.md', 'huge.md', 'latin1.md', 'link.md', 'with-nul.md', 'pipe'].sort(),
    );
  });

  it('INVALID_CONTENT · UNSUPPORTED_FILES for NAME_COLLISION, PATH_TOO_LONG and PATH_TOO_DEEP', async () => {
    const dir = join(ws, 'limits');
    expect((await server.call('notes_pull', { path: dir })).structured.code).toBe('OK');
    writeFileSync(join(dir, 'Case.md'), 'upper\n');
    writeFileSync(join(dir, 'case.md'), 'lower\n');
    // 16 directories of 250 bytes: a notebook path of 4,016 bytes before the file name.
    const segments = Array.from({ length: 16 }, (_, i) => `deep${i}`.padEnd(250, 'd'));
    const deepest = join(dir, ...segments);
    mkdirSync(deepest, { recursive: true });
    const prefix = `${segments.join('/')}/`;
    // 4,094 bytes: within the 4,096 of a notebook path, but L + '/' + it exceeds 4,095.
    const tooDeep = `${'too-deep'.padEnd(4094 - prefix.length - 3, 'p')}.md`;
    // 4,100 bytes: over the 4,096 a notebook path may have.
    const tooLong = `${'too-long'.padEnd(4100 - prefix.length - 3, 'l')}.md`;
    // The full paths exceed PATH_MAX, so the files are created relative to their directory.
    execFileSync('sh', ['-c', 'printf deep > "$1" && printf long > "$2"', 'sh', tooDeep, tooLong], {
      cwd: deepest,
    });
    expectEnvelope(await server.call('notes_pull', { path: dir }), {
      code: 'INVALID_CONTENT',
      reason: 'UNSUPPORTED_FILES',
      files: [
        { path: 'Case.md', reason: 'NAME_COLLISION', ranges: [] },
        { path: 'case.md', reason: 'NAME_COLLISION', ranges: [] },
        { path: `${prefix}${tooDeep}`, reason: 'PATH_TOO_DEEP', ranges: [] },
        { path: `${prefix}${tooLong}`, reason: 'PATH_TOO_LONG', ranges: [] },
      ],
    });
    expect(readdirSync(deepest).sort()).toEqual([tooDeep, tooLong]);
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['Case.md', 'case.md', segments[0]]));
  });

  it('CONTENT_CONFLICT · MERGE_CONFLICT with marker ranges, then UNRESOLVED_MARKERS', async () => {
    const a = join(ws, 'copy-a');
    const b = join(ws, 'copy-b');
    expect((await server.call('notes_pull', { path: a })).structured.code).toBe('OK');
    writeFileSync(join(a, 'x.md'), '1\n2\n3\n');
    expect((await server.call('notes_commit', { message: 'x', path: a })).structured.code).toBe(
      'OK',
    );
    expect((await server.call('notes_pull', { path: b })).structured.code).toBe('OK');
    writeFileSync(join(a, 'x.md'), '1\nA\n3\n');
    expect((await server.call('notes_commit', { message: 'A', path: a })).structured.code).toBe(
      'OK',
    );
    writeFileSync(join(b, 'x.md'), '1\nB\n3\n');
    expectEnvelope(await server.call('notes_commit', { message: 'B', path: b }), {
      code: 'CONTENT_CONFLICT',
      reason: 'MERGE_CONFLICT',
      files: [{ path: 'x.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 2, end: 6 }] }],
    });
    expect(execFileSync('cat', [join(b, 'x.md')], { encoding: 'utf8' })).toBe(
      '1\n<<<<<<< local\nB\n=======\nA\n>>>>>>> remote\n3\n',
    );
    appendFileSync(join(b, 'x.md'), 'more\n');
    expectEnvelope(await server.call('notes_commit', { message: 'B again', path: b }), {
      code: 'CONTENT_CONFLICT',
      reason: 'UNRESOLVED_MARKERS',
      files: [{ path: 'x.md', reason: 'MARKER_BLOCK', ranges: [{ start: 2, end: 6 }] }],
    });
  });

  it('CONTENT_CONFLICT · MERGE_CONFLICT with MODIFY_DELETE and NAME_COLLISION; the local bytes are kept', async () => {
    const a = join(ws, 'moves-a');
    const b = join(ws, 'moves-b');
    expect((await server.call('notes_pull', { path: a })).structured.code).toBe('OK');
    writeFileSync(join(a, 'gone.md'), 'base\n');
    expect((await server.call('notes_commit', { message: 'base', path: a })).structured.code).toBe(
      'OK',
    );
    expect((await server.call('notes_pull', { path: b })).structured.code).toBe('OK');
    // The remote side deletes gone.md and adds Note.md.
    rmSync(join(a, 'gone.md'));
    writeFileSync(join(a, 'Note.md'), 'remote note\n');
    expect((await server.call('notes_commit', { message: 'r', path: a })).structured.code).toBe(
      'OK',
    );
    // The local side modifies gone.md and adds note.md, which folds onto Note.md.
    writeFileSync(join(b, 'gone.md'), 'base, edited\n');
    writeFileSync(join(b, 'note.md'), 'local note\n');
    expectEnvelope(await server.call('notes_commit', { message: 'l', path: b }), {
      code: 'CONTENT_CONFLICT',
      reason: 'MERGE_CONFLICT',
      files: [
        { path: 'gone.md', reason: 'MODIFY_DELETE', ranges: [] },
        { path: 'note.md', reason: 'NAME_COLLISION', ranges: [] },
      ],
    });
    // (the server's other cases share its store, so other accepted files may be here too)
    const after = snapshot(b);
    expect(after).toMatchObject({
      'Note.md': 'remote note\n',
      'gone.md': 'base, edited\n',
      'note.md~local': 'local note\n',
    });
    expect(after).not.toHaveProperty(['note.md']);
  });

  it('INVALID_ARGUMENTS for a duplicate key on the raw stdio line', async () => {
    const box = sandbox();
    const raw = new RawServer(['--workspace-root', box.ws], box.env);
    running.push({ close: () => void raw.child.kill('SIGKILL') });
    await raw.initialize();
    raw.child.stdin.write(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"notes_pull","arguments":{"path":"","path":""}}}\n',
    );
    const line = await raw.response(7);
    const result = line.result as {
      isError: boolean;
      content: { text: string }[];
      structuredContent: Record<string, unknown>;
    };
    expectEnvelope(
      {
        isError: result.isError,
        structured: result.structuredContent,
        text: result.content[0]!.text,
      },
      { code: 'INVALID_REQUEST', reason: 'INVALID_ARGUMENTS' },
    );
  });
});

describe('READ_ONLY_PATH with both path sets configured', () => {
  it('refuses the commit, resets the read-only files, keeps the rest; arrays and candid lines carry both sets', async () => {
    const box = sandbox();
    const server = await serve(
      ['--workspace-root', box.ws, '--writable', 'notes', '--read-only', 'notes/frozen'],
      box.env,
    );
    const sets = { writable: ['notes'], readOnly: ['notes/frozen'] };
    expectEnvelope(await server.call('notes_pull', { bogus: true }), {
      code: 'INVALID_REQUEST',
      reason: 'INVALID_ARGUMENTS',
      sets,
    });
    expect((await server.call('notes_pull', {})).structured.code).toBe('OK');
    mkdirSync(join(box.ws, 'notes', 'frozen'), { recursive: true });
    writeFileSync(join(box.ws, 'notes', 'ok.md'), 'mine\n');
    writeFileSync(join(box.ws, 'notes', 'frozen', 'cold.md'), 'not mine\n');
    writeFileSync(join(box.ws, 'top.md'), 'outside\n');
    expectEnvelope(await server.call('notes_commit', { message: 'try' }), {
      code: 'READ_ONLY_PATH',
      reason: 'CHANGE_OUTSIDE_WRITABLE',
      files: [
        { path: 'notes/frozen/cold.md', reason: 'READ_ONLY_PATH', ranges: [] },
        { path: 'top.md', reason: 'READ_ONLY_PATH', ranges: [] },
      ],
      sets,
    });
    // The added read-only files were removed (reset to the accepted state); the rest stays.
    expect(readdirSync(box.ws).sort()).toEqual(['notes']);
    // (the emptied `frozen` goes too: empty directories are not notebook state)
    expect(readdirSync(join(box.ws, 'notes'))).toEqual(['ok.md']);
  });
});

/** Every `.pack` file under `dir`, recursively. */
function packsUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((name) => name.endsWith('.pack'))
    .map((name) => join(dir, name));
}

describe('STORAGE_INTEGRITY and ACCESS_DENIED on the embedded store, edited on disk', () => {
  it('CHECKSUM_MISMATCH, MISSING_PACK, INVALID_MANIFEST, UNSUPPORTED_MANIFEST, REMOTE_ROLLED_BACK; ACCESS_DENIED', async () => {
    const box = sandbox();
    const storeDir = join(box.env.HOME!, 'store');
    const prefixDir = join(storeDir, 'p');
    const server = await serve(
      ['--workspace-root', box.ws, '--store-dir', storeDir, '--prefix', 'p'],
      box.env,
    );
    const at = (name: string) => join(box.ws, name);
    expect((await server.call('notes_pull', { path: at('a') })).structured.code).toBe('OK');
    writeFileSync(join(at('a'), 'n.md'), 'note\n');
    expect(
      (await server.call('notes_commit', { message: 'n', path: at('a') })).structured,
    ).toMatchObject({ code: 'OK', generation: 1 });

    // The store refuses writes: the pack upload is denied, L keeps its edit.
    writeFileSync(join(at('a'), 'n.md'), 'note, edited\n');
    const undo = refuseWrites(join(prefixDir, '.tmp'));
    try {
      expectEnvelope(await server.call('notes_commit', { message: 'denied', path: at('a') }), {
        code: 'STORAGE_FAILURE',
        reason: 'ACCESS_DENIED',
      });
    } finally {
      undo();
    }

    const [pack] = packsUnder(prefixDir);
    const bytes = execFileSync('cat', [pack!]);
    writeFileSync(pack!, Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1)! ^ 1])]));
    expectEnvelope(await server.call('notes_pull', { path: at('b') }), {
      code: 'STORAGE_INTEGRITY',
      reason: 'CHECKSUM_MISMATCH',
    });
    rmSync(pack!);
    expectEnvelope(await server.call('notes_pull', { path: at('c') }), {
      code: 'STORAGE_INTEGRITY',
      reason: 'MISSING_PACK',
    });

    // `current` is a series of version files; a newer one is what every reader sees.
    const currentDir = join(prefixDir, 'current');
    const newer = join(currentDir, '9'.repeat(20));
    writeFileSync(newer, '{"version":1,"generation":');
    expectEnvelope(await server.call('notes_pull', { path: at('a') }), {
      code: 'STORAGE_INTEGRITY',
      reason: 'INVALID_MANIFEST',
    });
    writeFileSync(newer, '{"version":2}');
    expectEnvelope(await server.call('notes_pull', { path: at('a') }), {
      code: 'STORAGE_INTEGRITY',
      reason: 'UNSUPPORTED_MANIFEST',
    });
    rmSync(currentDir, { recursive: true });
    expectEnvelope(await server.call('notes_pull', { path: at('a') }), {
      code: 'STORAGE_INTEGRITY',
      reason: 'REMOTE_ROLLED_BACK',
    });
    // Nothing of L was touched by any of them.
    expect(execFileSync('cat', [join(at('a'), 'n.md')], { encoding: 'utf8' })).toBe(
      'note, edited\n',
    );
  });
});

describe('STORAGE_INTEGRITY from a hand-made accepted notebook planted in the embedded store', () => {
  const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);
  const cases: { name: string; reason: string; head: PlantedHead }[] = [
    {
      name: 'a pack without the blob of one of the head’s files',
      reason: 'MISSING_OBJECT',
      head: { files: { 'kept.md': 'kept\n', 'lost.md': 'lost\n' }, omitBlobsOf: ['lost.md'] },
    },
    {
      name: 'a blob holding U+0000',
      reason: 'INVALID_REMOTE_CONTENT',
      head: { files: { 'fine.md': 'fine\n', 'nul.md': 'a\u0000b\n' } },
    },
    {
      name: 'a blob that is not UTF-8',
      reason: 'INVALID_REMOTE_CONTENT',
      head: { files: { 'latin1.md': latin1 } },
    },
    {
      name: 'a reserved device name',
      reason: 'INVALID_REMOTE_CONTENT',
      head: { files: { 'CON.txt': 'device\n' } },
    },
    {
      name: 'a name ending in a dot',
      reason: 'INVALID_REMOTE_CONTENT',
      head: { files: { 'trailing.': 'dot\n' } },
    },
  ];
  /** A server on a fresh store holding `head`, with one local file in its notebook directory. */
  async function planted(head: PlantedHead) {
    const box = sandbox();
    const storeDir = join(box.env.HOME!, 'store');
    await plantHead(storeDir, 'p', head);
    const server = await serve(
      ['--workspace-root', box.ws, '--store-dir', storeDir, '--prefix', 'p'],
      box.env,
    );
    writeFileSync(join(box.ws, 'mine.md'), 'mine\n');
    return { server, ws: box.ws };
  }

  it('control: a complete, valid planted head is accepted, so the failures below come from what each one breaks', async () => {
    const { server, ws } = await planted({ files: { 'kept.md': 'kept\n', 'lost.md': 'lost\n' } });
    expect((await server.call('notes_pull', {})).structured.code).toBe('OK');
    expect(snapshot(ws)).toEqual({ 'kept.md': 'kept\n', 'lost.md': 'lost\n', 'mine.md': 'mine\n' });
    await server.close();
  });

  for (const { name, reason, head } of cases) {
    it(`${reason}: ${name}; the caller’s file is kept and nothing is written`, async () => {
      const { server, ws } = await planted(head);
      expectEnvelope(await server.call('notes_pull', {}), {
        code: 'STORAGE_INTEGRITY',
        reason,
      });
      expect(snapshot(ws)).toEqual({ 'mine.md': 'mine\n' });
      await server.close();
    });
  }
});

/** A human's commit of `file` through the CLI, in a directory of its own on `env`'s store. */
function humanCommit(env: NodeJS.ProcessEnv, file: string): void {
  const dir = join(realpathSync(mkdtempSync(join(env.HOME!, 'human-'))), 'nb');
  expect(runBin(['pull', dir], env).status).toBe(0);
  writeFileSync(join(dir, file), 'from a human\n');
  expect(runBin(['commit', dir, '-m', 'human'], env).status).toBe(0);
}

/** Every file under `dir` (recursively) with its text, keyed by relative path. */
function snapshot(dir: string): Record<string, string> {
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((name) =>
    lstatSync(join(dir, name)).isFile(),
  );
  return Object.fromEntries(
    files.sort().map((name) => [name, readFileSync(join(dir, name), 'utf8')]),
  );
}

describe('PATH_BUSY and REMOTE_BUSY: a commit held between its pack upload and its CAS', () => {
  it('a second server waits out the lock; a human commit wins the race; the held commit loses with --commit-retries 0', async () => {
    const { env, ws } = sandbox();
    const storeDir = join(env.HOME!, 'store');
    const args = ['--workspace-root', ws, '--private-root', join(env.HOME!, 'private')];
    args.push('--store-dir', storeDir, '--commit-retries', '0');
    const held = await serve(args, { ...env, SLIVINGDOC_FAILPOINTS: 'after-pack-upload=pause' });
    const other = await serve(args, env);
    const dir = join(ws, 'shared');
    expect((await held.call('notes_pull', { path: dir })).structured.code).toBe('OK');
    writeFileSync(join(dir, 'mine.md'), 'mine\n');
    const commit = held.call('notes_commit', { message: 'held', path: dir });
    await until(() => packsUnder(storeDir).length === 1, 'the held commit uploaded its pack');
    // Held only once it waits for SIGUSR2: the pack file shows before its upload call returns.
    await untilCatching(held.pid, FAILPOINT_RESUME_SIGNAL);

    expectEnvelope(await other.call('notes_pull', { path: dir }), {
      code: 'PATH_BUSY',
      reason: 'LOCK_TIMEOUT',
    });
    // The human writes from another host (its own publication gate): a local writer would
    // first wait out the 30 s gate budget the held commit keeps, then race the same way
    // (that fallback is the engine's test/gate.test.ts).
    humanCommit(
      { ...env, SLIVINGDOC_STORE_DIR: storeDir, SLIVINGDOC_TEST_GATE_SCOPE: 'another-host' },
      'theirs.md',
    );
    process.kill(held.pid, FAILPOINT_RESUME_SIGNAL);
    expectEnvelope(await commit, { code: 'REMOTE_BUSY', reason: 'RETRIES_EXHAUSTED' });
    expect(readdirSync(dir)).toEqual(['mine.md']); // L untouched
  });
});

describe('RECOVERY_FAILURE and ENGINE_FAILED', () => {
  it('RECOVERY_FAILURE · UNEXPECTED_FAILURE when rewriting L fails midway; the caller’s file is kept', async () => {
    const { env, ws } = sandbox();
    humanCommit(env, 'remote.md');
    const server = await serve(['--workspace-root', ws], {
      ...env,
      SLIVINGDOC_FAILPOINTS: 'mid-materialize=throw',
    });
    writeFileSync(join(ws, 'local.md'), 'kept\n');
    // The failpoint fires in the repair too, so the repair cannot finish: the flag stays, and
    // the next call's entry repair fails the same way.
    for (let call = 0; call < 2; call++) {
      expectEnvelope(await server.call('notes_pull', {}), {
        code: 'RECOVERY_FAILURE',
        reason: 'UNEXPECTED_FAILURE',
        recovery: { stage: 'materialize', remoteAccepted: 'no', resynchronized: false },
      });
    }
    expect(execFileSync('cat', [join(ws, 'local.md')], { encoding: 'utf8' })).toBe('kept\n');
  });

  it('RECOVERY_FAILURE · RESYNC_PENDING while the store fails after a failed repair; a later server finishes it and nothing is lost', async () => {
    const { env, ws } = sandbox();
    const storeDir = join(env.HOME!, 'store');
    const onStore = { ...env, SLIVINGDOC_STORE_DIR: storeDir };
    // A first pull (the CLI's, on the same private root) gives the directory its baseline.
    expect(runBin(['pull', ws], onStore).status).toBe(0);
    humanCommit(onStore, 'remote.md');
    const broken = await serve(['--workspace-root', ws], {
      ...onStore,
      SLIVINGDOC_FAILPOINTS: 'mid-materialize=throw',
    });
    writeFileSync(join(ws, 'local.md'), 'kept\n');
    // The rewrite of L fails and so does its repair: the recovery flag stays set.
    expectEnvelope(await broken.call('notes_pull', {}), {
      code: 'RECOVERY_FAILURE',
      reason: 'UNEXPECTED_FAILURE',
      recovery: { stage: 'materialize', remoteAccepted: 'no', resynchronized: false },
    });
    // Every read of `current` now fails: its newest version file is a directory.
    const blocker = join(storeDir, 'slivingdoc', 'current', '9'.repeat(20));
    mkdirSync(blocker);
    writeFileSync(join(ws, 'later.md'), 'later\n');
    const held = snapshot(ws);
    const calls = [
      () => broken.call('notes_pull', {}),
      () => broken.call('notes_commit', { message: 'blocked' }),
    ];
    for (const call of calls) {
      expectEnvelope(await call(), {
        code: 'RECOVERY_FAILURE',
        reason: 'RESYNC_PENDING',
        recovery: { stage: 'resync', remoteAccepted: 'unknown', resynchronized: false },
      });
      expect(snapshot(ws)).toEqual(held);
    }
    await broken.close();

    // With the store readable again, a server without failpoints repairs first and keeps
    // every local edit next to the accepted file.
    rmSync(blocker, { recursive: true });
    const healthy = await serve(['--workspace-root', ws], onStore);
    expect((await healthy.call('notes_pull', {})).structured.code).toBe('OK');
    expect(snapshot(ws)).toEqual({
      'later.md': 'later\n',
      'local.md': 'kept\n',
      'remote.md': 'from a human\n',
    });
  });

  it('ENGINE_FAILED · LOCAL_WRITE_FAILED when a new notebook directory cannot be created in L (permission denied, file name too long)', async () => {
    const { env, ws } = sandbox();
    const server = await serve(['--workspace-root', ws], env);
    const parent = join(ws, 'locked');
    mkdirSync(parent);
    const nb = join(parent, 'nb');
    const undo = refuseWrites(parent);
    try {
      expectEnvelope(await server.call('notes_pull', { path: nb }), {
        code: 'ENGINE_FAILED',
        reason: 'LOCAL_WRITE_FAILED',
        detail: 'permission denied',
      });
    } finally {
      undo();
    }
    expect(readdirSync(parent)).toEqual([]);
    // Nothing was left half-registered: once writable, the same call succeeds.
    expect((await server.call('notes_pull', { path: nb })).structured.code).toBe('OK');
    // A path segment over the file system's 255-byte name limit is a valid request path
    // (contract §2 bounds only the whole path) that no directory can be created for.
    for (const path of [join(ws, 'n'.repeat(256)), join(ws, 'n'.repeat(300), 'below')]) {
      expectEnvelope(await server.call('notes_pull', { path }), {
        code: 'ENGINE_FAILED',
        reason: 'LOCAL_WRITE_FAILED',
        detail: 'file name too long',
      });
    }
    expect(readdirSync(ws)).toEqual(['locked']);
  });

  it('ENGINE_FAILED when private state refuses writes, or on an unclassified failure', async () => {
    const { env, ws } = sandbox();
    const privateRoot = join(env.HOME!, 'private');
    mkdirSync(privateRoot, { mode: 0o700 });
    const server = await serve(['--workspace-root', ws, '--private-root', privateRoot], env);
    const undo = refuseWrites(privateRoot);
    try {
      expectEnvelope(await server.call('notes_pull', { path: join(ws, 'p') }), {
        code: 'ENGINE_FAILED',
        reason: 'PRIVATE_STATE_UNAVAILABLE',
        detail: 'permission denied',
      });
    } finally {
      undo();
    }
    const failing = await serve(['--workspace-root', ws, '--private-root', privateRoot], {
      ...env,
      SLIVINGDOC_FAILPOINTS: 'after-scan=throw',
    });
    // An unclassified failure before L changes carries no detail (its cause is in the log).
    expectEnvelope(await failing.call('notes_pull', { path: join(ws, 'i') }), {
      code: 'ENGINE_FAILED',
      reason: 'INTERNAL_ERROR',
    });
  });
});

describe('STORAGE_FAILURE on the real S3 server behind a fault proxy', () => {
  it('STORE_ERROR on 500s, PUBLICATION_UNPROVEN when the CAS answer is lost, STORE_UNREACHABLE once the endpoint is gone', async () => {
    const s3 = providedS3(inject('s3'));
    const proxy = await startFaultProxy({ target: s3.endpoint });
    running.push(proxy);
    const { env, ws } = sandbox({
      SLIVINGDOC_BUCKET: s3.bucket,
      SLIVINGDOC_PREFIX: `envelopes-${process.pid}-${Date.now()}`,
      AWS_ENDPOINT_URL_S3: proxy.url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    });
    const server = await serve(['--workspace-root', ws], env);
    expect((await server.call('notes_pull', {})).structured.code).toBe('OK');

    proxy.setRules([
      {
        method: 'GET',
        key: /current$/,
        fault: { kind: 'error', status: 500, code: 'InternalError' },
      },
    ]);
    expectEnvelope(await server.call('notes_pull', {}), {
      code: 'STORAGE_FAILURE',
      reason: 'STORE_ERROR',
    });

    writeFileSync(join(ws, 'n.md'), 'n\n');
    proxy.setRules([
      { method: 'PUT', key: /current$/, fault: { kind: 'drop-response' } },
      {
        method: 'GET',
        key: /current$/,
        on: Array.from({ length: 50 }, (_, i) => i + 2),
        fault: { kind: 'error', status: 500, code: 'InternalError' },
      },
    ]);
    expectEnvelope(await server.call('notes_commit', { message: 'lost answer' }), {
      code: 'STORAGE_FAILURE',
      reason: 'PUBLICATION_UNPROVEN',
    });
    expect(readdirSync(ws)).toEqual(['n.md']); // L untouched
    await proxy.idle();

    proxy.setRules([]);
    await proxy.close();
    expectEnvelope(await server.call('notes_pull', {}), {
      code: 'STORAGE_FAILURE',
      reason: 'STORE_UNREACHABLE',
    });
  });
});
