import {
  buildError,
  candidText,
  catalogueEntries,
  createScrubber,
  DomainError,
  type DomainErrorInit,
  type ErrorCode,
  type Reason,
} from '@slivingdoc/envelope';
import { describe, expect, it } from 'vitest';
import { FakeNotebookService } from './fake-service';
import { connect, FIXED_ID } from './helpers';

const sets = { readOnly: ['docs'], writable: ['notes'] };

function sample(code: ErrorCode, reason: Reason): DomainError {
  const init = {
    code,
    reason,
    message: `${reason} happened under /var/p/abc.`,
    files:
      code === 'CONTENT_CONFLICT'
        ? [{ path: 'notes/z.md', reason: 'TEXT_CONFLICT', ranges: [{ start: 3, end: 7 }] }]
        : [],
    ...(code === 'ENGINE_FAILED' ? { detail: 'permission denied' } : {}),
    ...(code === 'RECOVERY_FAILURE'
      ? { recovery: { stage: 'materialize', remoteAccepted: 'yes', resynchronized: true } }
      : {}),
  } as DomainErrorInit;
  return new DomainError(init);
}

describe('domain errors map to the envelope', () => {
  it.each(catalogueEntries().map(({ code, reason }) => [code, reason] as const))(
    '%s · %s becomes isError with the candid text and the structured object',
    async (code, reason) => {
      const service = new FakeNotebookService('/w/nb', sets);
      const thrown = sample(code, reason);
      service.onCommit = async () => {
        throw thrown;
      };
      const { client, records } = await connect({ service });
      const result = await client.callTool({ name: 'notes_commit', arguments: { message: 'm' } });
      const expected = buildError(thrown, {
        diagnosticId: FIXED_ID,
        sets,
        scrubber: createScrubber({ privateRoot: '/var/p', env: {} }),
      });
      expect(expected.message).toBe(`${reason} happened under [private]/abc.`);
      expect(result).toEqual({
        content: [{ type: 'text', text: candidText(expected, sets) }],
        structuredContent: expected,
        isError: true,
      });
      expect(records.at(-1)).toMatchObject({ mcpReqID: FIXED_ID, outcome: code, reason });
    },
  );

  it('maps an unclassified exception to ENGINE_FAILED · INTERNAL_ERROR without detail or cause text', async () => {
    const service = new FakeNotebookService();
    service.onPull = async () => {
      throw new Error('isomorphic-git exploded at /var/p/x with AKIAIOSFODNN7EXAMPLE');
    };
    const { client, records } = await connect({ service });
    const result = await client.callTool({ name: 'notes_pull', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'INTERNAL_ERROR',
      action: 'RETRY',
      retryable: true,
    });
    expect(result.structuredContent).not.toHaveProperty('detail');
    expect(JSON.stringify(result)).not.toContain('exploded');
    const completion = records.at(-1) as unknown as {
      level: string;
      err: { cause: { message: string } };
    };
    expect(completion.level).toBe('error');
    expect(completion.err.cause.message).toBe(
      'isomorphic-git exploded at /var/p/x with [redacted]',
    );
  });

  it('gives a classified exception its fixed detail', async () => {
    const service = new FakeNotebookService();
    service.onPull = async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    const { client } = await connect({ service });
    const result = await client.callTool({ name: 'notes_pull', arguments: {} });
    expect(result.structuredContent).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'INTERNAL_ERROR',
      detail: 'disk full',
    });
    expect((result.content as { text: string }[])[0]?.text).toContain('\ndetail: disk full\n');
  });

  it('turns an envelope that cannot be built into an internal error, not a crash', async () => {
    const service = new FakeNotebookService();
    service.onPull = async () => {
      throw new DomainError({
        code: 'CONTENT_CONFLICT',
        reason: 'MERGE_CONFLICT',
        message: 'm',
        files: [{ path: 'a', reason: 'TEXT_CONFLICT', ranges: [{ start: 0, end: -1 }] }],
      });
    };
    const { client } = await connect({ service });
    const result = await client.callTool({ name: 'notes_pull', arguments: {} });
    expect(result.structuredContent).toMatchObject({
      code: 'ENGINE_FAILED',
      reason: 'INTERNAL_ERROR',
      files: [],
    });
  });
});

describe('success', () => {
  it('is one text item with the path (and set suffix) plus the structured object', async () => {
    const service = new FakeNotebookService('/w/nb', sets);
    const { client } = await connect({ service });
    const result = await client.callTool({ name: 'notes_pull', arguments: { path: '/w/nb/sub' } });
    expect(result).toEqual({
      content: [
        {
          type: 'text',
          text: '/w/nb/sub (writable: notes; read-only: docs; longest match decides)',
        },
      ],
      structuredContent: {
        code: 'OK',
        path: '/w/nb/sub',
        generation: 7,
        filesChanged: 1,
        insertions: 2,
        deletions: 1,
        files: [{ path: 'notes/a.md', insertions: 2, deletions: 1 }],
        readOnly: ['docs'],
        writable: ['notes'],
      },
    });
  });
});
