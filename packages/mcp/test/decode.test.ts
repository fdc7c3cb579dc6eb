import { describe, expect, it } from 'vitest';
import { FakeNotebookService } from './fake-service';
import { connect, FIXED_ID } from './helpers';

type Args = Record<string, unknown> | undefined;

async function refusal(tool: 'notes_pull' | 'notes_commit', args: Args) {
  const { client, service } = await connect({ service: new FakeNotebookService() });
  const result = await client.callTool({
    name: tool,
    ...(args === undefined ? {} : { arguments: args }),
  });
  return { result, service };
}

const long = (bytes: number) => `/${'a'.repeat(bytes - 1)}`;

describe('the strict decoder (contract §2), through the SDK client', () => {
  it.each<[string, 'notes_pull' | 'notes_commit', Args, string]>([
    ['an unknown field', 'notes_pull', { path: '/w/nb', force: true }, 'INVALID_ARGUMENTS'],
    ['message on notes_pull', 'notes_pull', { message: 'm' }, 'INVALID_ARGUMENTS'],
    ['a null path', 'notes_pull', { path: null }, 'INVALID_ARGUMENTS'],
    ['a null message', 'notes_commit', { message: null }, 'INVALID_ARGUMENTS'],
    ['a numeric path', 'notes_pull', { path: 1 }, 'INVALID_ARGUMENTS'],
    ['an array message', 'notes_commit', { message: ['m'] }, 'INVALID_ARGUMENTS'],
    ['an object path', 'notes_commit', { message: 'm', path: {} }, 'INVALID_ARGUMENTS'],
    ['a missing message', 'notes_commit', { path: '/w/nb' }, 'INVALID_ARGUMENTS'],
    ['absent arguments on notes_commit', 'notes_commit', undefined, 'INVALID_ARGUMENTS'],
    ['a relative path', 'notes_pull', { path: 'nb' }, 'PATH_INVALID'],
    ['~user', 'notes_pull', { path: '~u/nb' }, 'PATH_INVALID'],
    ['a path over 4,096 bytes', 'notes_pull', { path: long(4097) }, 'PATH_INVALID'],
    [
      'a path over 4,096 bytes after ~/',
      'notes_pull',
      { path: `~/${'a'.repeat(4090)}` },
      'PATH_INVALID',
    ],
    ['a path with a lone surrogate', 'notes_pull', { path: '/w/nb/\ud800' }, 'PATH_INVALID'],
    ['a path with U+0000', 'notes_pull', { path: '/w/\u0000' }, 'PATH_INVALID'],
    ['an empty message', 'notes_commit', { message: '' }, 'MESSAGE_INVALID'],
    [
      'a message of Unicode white space',
      'notes_commit',
      { message: ' \u0085\u3000\n' },
      'MESSAGE_INVALID',
    ],
    [
      'a message over 16,384 bytes',
      'notes_commit',
      { message: 'é'.repeat(8193) },
      'MESSAGE_INVALID',
    ],
    ['a message with U+0000', 'notes_commit', { message: 'a\u0000b' }, 'MESSAGE_INVALID'],
    ['a message with a lone surrogate', 'notes_commit', { message: 'a\udc00' }, 'MESSAGE_INVALID'],
    [
      'an unknown field before a bad path',
      'notes_commit',
      { message: '', path: 'x', x: 1 },
      'INVALID_ARGUMENTS',
    ],
    ['a bad path before a bad message', 'notes_commit', { message: '', path: 'x' }, 'PATH_INVALID'],
  ])('refuses %s', async (_what, tool, args, reason) => {
    const { result, service } = await refusal(tool, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      code: 'INVALID_REQUEST',
      reason,
      action: 'FIX_ARGUMENTS',
      retryable: false,
      diagnosticId: FIXED_ID,
      files: [],
      readOnly: [],
      writable: [],
    });
    const content = result.content as { type: string; text: string }[];
    expect(content).toHaveLength(1);
    expect(content[0]?.text.split('\n')[0]).toBe(`INVALID_REQUEST · ${reason}`);
    expect([...service.pulls, ...service.commits]).toEqual([]);
  });

  it.each<[string, 'notes_pull' | 'notes_commit', Args, { path?: string; message?: string }]>([
    ['absent arguments', 'notes_pull', undefined, {}],
    ['empty arguments', 'notes_pull', {}, {}],
    ['an empty path', 'notes_pull', { path: '' }, { path: '' }],
    ['a ~/ path, kept raw for the engine', 'notes_pull', { path: '~/nb' }, { path: '~/nb' }],
    ['a path of exactly 4,096 bytes', 'notes_pull', { path: long(4096) }, { path: long(4096) }],
    [
      'a message of 16,384 bytes',
      'notes_commit',
      { message: 'é'.repeat(8192) },
      { message: 'é'.repeat(8192) },
    ],
    [
      'a message of U+FEFF and U+200B (not white space)',
      'notes_commit',
      { message: '\ufeff\u200b' },
      { message: '\ufeff\u200b' },
    ],
    [
      'a message kept byte for byte',
      'notes_commit',
      { message: ' fix\r\n\tmore  ', path: '/w/nb/sub' },
      { message: ' fix\r\n\tmore  ', path: '/w/nb/sub' },
    ],
  ])('accepts %s', async (_what, tool, args, expected) => {
    const { result, service } = await refusal(tool, args);
    expect(result.isError).toBeUndefined();
    const [request] = tool === 'notes_pull' ? service.pulls : service.commits;
    const { signal, actor, viaTools, ...rest } = request as {
      signal?: AbortSignal;
      actor?: string;
      viaTools?: boolean;
    };
    expect(signal).toBeInstanceOf(AbortSignal);
    // A tool commit is an agent's: the review setting applies to it, never to a pull.
    expect(viaTools).toBe(tool === 'notes_pull' ? undefined : true);
    // A commit carries the client's name (its clientInfo.name) as its actor.
    expect(actor).toBe(tool === 'notes_pull' ? undefined : 'test');
    expect(JSON.parse(JSON.stringify(rest))).toEqual(expected);
  });
});
