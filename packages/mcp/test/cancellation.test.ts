import { until } from '@slivingdoc/testkit/until';
import { describe, expect, it } from 'vitest';
import { FakeNotebookService } from './fake-service';
import { connect } from './helpers';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('cancellation', () => {
  it('stays a protocol error: no envelope, no response, a CANCELLED record', async () => {
    const service = new FakeNotebookService();
    const started = deferred();
    service.onPull = (request) =>
      new Promise((_resolve, reject) => {
        started.resolve();
        request.signal?.addEventListener('abort', () => reject(request.signal?.reason));
      });
    const { client, records, sent } = await connect({ service });
    const abort = new AbortController();
    const call = client.callTool({ name: 'notes_pull', arguments: {} }, undefined, {
      signal: abort.signal,
    });
    await started.promise;
    abort.abort('user pressed stop');
    await expect(call).rejects.toThrow();
    // The server finishes the handler; a later call proves the session still works and
    // that nothing was ever sent for the cancelled request.
    service.onPull = new FakeNotebookService().onPull;
    await client.callTool({ name: 'notes_pull', arguments: {} });
    const responses = sent.filter((m) => 'id' in m && ('result' in m || 'error' in m));
    expect(responses.map((m) => ('id' in m ? m.id : undefined))).toEqual([0, 2]); // initialize and the second call
    expect(records.filter((r) => r.msg === 'tool call completed').map((r) => r.outcome)).toEqual([
      'CANCELLED',
      'OK',
    ]);
    expect(records[1]).not.toHaveProperty('err');
  });

  it('discards the result of a call that finished after it was cancelled', async () => {
    const service = new FakeNotebookService();
    const started = deferred();
    const finish = deferred();
    const base = service.onCommit;
    service.onCommit = async (request) => {
      started.resolve();
      await finish.promise;
      return base(request);
    };
    const { client, records, sent } = await connect({ service });
    const abort = new AbortController();
    const call = client.callTool({ name: 'notes_commit', arguments: { message: 'm' } }, undefined, {
      signal: abort.signal,
    });
    await started.promise;
    abort.abort();
    await expect(call).rejects.toThrow();
    finish.resolve();
    // The call ends on its own after the cancellation: its completion record marks that.
    const completed = () => records.filter((r) => r.msg === 'tool call completed');
    await until(() => completed().length > 0, 'the cancelled call logged its completion', {
      everyMs: 1,
    });
    expect(completed().map((r) => r.outcome)).toEqual(['CANCELLED']);
    await client.listTools();
    expect(sent.filter((m) => 'id' in m && m.id === 1)).toEqual([]);
  });
});

describe('concurrency', () => {
  it('runs calls on different directories concurrently (per-directory order is the engine’s)', async () => {
    const service = new FakeNotebookService();
    const bothStarted = deferred();
    let running = 0;
    const base = service.onPull;
    service.onPull = async (request) => {
      running += 1;
      if (running === 2) bothStarted.resolve();
      await bothStarted.promise;
      return base(request);
    };
    const { client } = await connect({ service });
    const results = await Promise.all([
      client.callTool({ name: 'notes_pull', arguments: { path: '/w/a' } }),
      client.callTool({ name: 'notes_pull', arguments: { path: '/w/b' } }),
    ]);
    expect(results.map((r) => (r.structuredContent as { path: string }).path)).toEqual([
      '/w/a',
      '/w/b',
    ]);
  });
});
