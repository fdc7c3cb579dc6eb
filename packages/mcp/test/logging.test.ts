import { DomainError } from '@slivingdoc/envelope';
import { describe, expect, it } from 'vitest';
import { FakeNotebookService } from './fake-service';
import { connect } from './helpers';

describe('per-call log records (contract §12)', () => {
  it('logs exactly one start and one completion record per call, with a fresh mcpReqID', async () => {
    const service = new FakeNotebookService();
    let n = 0;
    const { client, records } = await connect({
      service,
      newDiagnosticId: () => `${n++}`.padStart(16, 'a'),
    });
    await client.callTool({ name: 'notes_pull', arguments: {} });
    await client.callTool({ name: 'notes_commit', arguments: { message: 'x' } });
    expect(records.map(({ durationMs, ...r }) => r)).toEqual([
      { level: 'info', msg: 'tool call started', mcpReqID: 'aaaaaaaaaaaaaaa0', tool: 'notes_pull' },
      {
        level: 'info',
        msg: 'tool call completed',
        mcpReqID: 'aaaaaaaaaaaaaaa0',
        tool: 'notes_pull',
        outcome: 'OK',
      },
      {
        level: 'info',
        msg: 'tool call started',
        mcpReqID: 'aaaaaaaaaaaaaaa1',
        tool: 'notes_commit',
      },
      {
        level: 'info',
        msg: 'tool call completed',
        mcpReqID: 'aaaaaaaaaaaaaaa1',
        tool: 'notes_commit',
        outcome: 'OK',
      },
    ]);
    for (const r of records.filter((r) => r.msg === 'tool call completed'))
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('uses the real diagnosticId source: the error’s diagnosticId is the logged mcpReqID', async () => {
    const service = new FakeNotebookService();
    service.onPull = async () => {
      throw new DomainError({
        code: 'PATH_BUSY',
        reason: 'LOCK_TIMEOUT',
        message: 'busy',
        cause: new Error('lock held by pid 42'),
      });
    };
    const { client, records } = await connect({ service, newDiagnosticId: undefined });
    const result = await client.callTool({ name: 'notes_pull', arguments: {} });
    const { diagnosticId } = result.structuredContent as { diagnosticId: string };
    expect(diagnosticId).toMatch(/^[0-9a-f]{16}$/);
    expect(records).toHaveLength(2);
    expect(records.map((r) => r.mcpReqID)).toEqual([diagnosticId, diagnosticId]);
    expect(records[1]).toMatchObject({
      level: 'warn',
      outcome: 'PATH_BUSY',
      reason: 'LOCK_TIMEOUT',
      err: {
        type: 'DomainError',
        message: 'busy',
        cause: { type: 'Error', message: 'lock held by pid 42' },
      },
    });
  });

  it('gives every call its own id', async () => {
    const { client, records } = await connect({ newDiagnosticId: undefined });
    await Promise.all([1, 2, 3].map(() => client.callTool({ name: 'notes_pull', arguments: {} })));
    const ids = records.filter((r) => r.msg === 'tool call started').map((r) => r.mcpReqID);
    expect(new Set(ids).size).toBe(3);
  });
});
