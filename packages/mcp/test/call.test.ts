import { createScrubber } from '@slivingdoc/envelope';
import { describe, expect, it } from 'vitest';
import { ProtocolError, runToolCall } from '../src';
import { FakeNotebookService, recordingLogger } from './fake-service';

function context() {
  const service = new FakeNotebookService();
  const { records, logger } = recordingLogger();
  const scrubber = createScrubber({ privateRoot: '/var/p', env: {} });
  return { service, records, ctx: { service, scrubber, logger, home: '/home/u' } };
}

const call = (tool: string, rawArguments: Record<string, unknown>) => ({
  tool,
  rawArguments,
  duplicateKeys: false,
  signal: new AbortController().signal,
});

describe('runToolCall picks the operation by tool name', () => {
  it('runs pull for notes_pull and commit for notes_commit, nothing else', async () => {
    const { service, ctx } = context();
    await runToolCall(call('notes_pull', {}), ctx);
    expect([service.pulls.length, service.commits.length]).toEqual([1, 0]);
    await runToolCall(call('notes_commit', { message: 'm' }), ctx);
    expect([service.pulls.length, service.commits.length]).toEqual([1, 1]);
    expect(service.commits[0]?.message).toBe('m');
  });

  it.each(['notes_push', 'toString', '__proto__', 'constructor', ''])(
    'refuses %j as a protocol error before logging or running anything',
    async (tool) => {
      const { service, records, ctx } = context();
      const refused = await runToolCall(call(tool, { message: 'm' }), ctx).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32602);
      expect((refused as ProtocolError).message).toBe(`Unknown tool: ${tool}`);
      expect([service.pulls, service.commits, records]).toEqual([[], [], []]);
    },
  );
});
