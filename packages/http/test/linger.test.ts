import { Agent, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { until } from '@slivingdoc/testkit/until';
import {
  upload as post,
  pushingUpload,
  type StalledUpload,
  stalledUpload,
} from '@slivingdoc/testkit/upload';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_LINGER_BOUNDS,
  type LingerBounds,
  type Listener,
  MAX_BODY_BYTES,
  readBody,
  startListener,
  writeRefusal,
} from '../src/index';

let listener: Listener | undefined;
const uploads: StalledUpload[] = [];
afterEach(async () => {
  for (const upload of uploads.splice(0)) upload.destroy();
  await listener?.close();
  listener = undefined;
});

/** Reads a body within the limit and answers its size, or refuses it. */
async function echoSize(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req, res);
  if (!body.ok) return writeRefusal(res, body);
  res.end(String(body.body.length));
}

async function listen(
  linger?: LingerBounds,
  handler: (req: IncomingMessage, res: ServerResponse) => void = (req, res) =>
    void echoSize(req, res),
): Promise<Listener> {
  listener = await startListener({ host: '127.0.0.1', port: 0, linger }, handler);
  return listener;
}

/** A stalled upload of a 10 MiB body, ended after the test. */
async function stalled(url: string): Promise<StalledUpload> {
  const upload = await stalledUpload(url, 10 * MAX_BODY_BYTES);
  uploads.push(upload);
  return upload;
}

describe('a refusal before the body is read whole: lingering close', () => {
  it('a slow writer 1 MiB over the limit reads its 413 every time, declared or streamed', async () => {
    const { url } = await listen();
    for (let run = 0; run < 10; run += 1) {
      for (const chunked of [false, true]) {
        const outcome = await post(url, { size: 2 * MAX_BODY_BYTES, chunked, pauseMs: 2 });
        expect(outcome, `run ${run}, chunked ${chunked}`).toMatchObject({ status: 413 });
        expect(outcome.error).toBeUndefined();
        expect(JSON.parse(outcome.body!)).toMatchObject({ error: { message: /larger than/ } });
      }
    }
  });

  it('a fast writer 1 MiB over the limit reads its 413 every time', async () => {
    const { url } = await listen();
    for (let run = 0; run < 20; run += 1) {
      const outcome = await post(url, { size: 2 * MAX_BODY_BYTES });
      expect(outcome, `run ${run}`).toMatchObject({ status: 413 });
      expect(outcome.error).toBeUndefined();
    }
  });

  it('a client that keeps sending 64 MiB gets its 413, then the connection is cut once the byte bound is spent', async () => {
    const { url } = await listen();
    const size = 64 * 1024 * 1024;
    const outcome = await pushingUpload(url, size);
    expect(outcome.status).toBe(413);
    expect(outcome.ended).toMatch(/ECONNRESET|EPIPE|closed/);
    expect(outcome.sent).toBeLessThan(size);
  });

  it('a connection that stops sending is cut once the time bound is spent', async () => {
    const { url } = await listen({ ...DEFAULT_LINGER_BOUNDS, maxMs: 100 });
    const upload = await stalled(url);
    expect(upload.status).toBe(413);
    await until(upload.cut, 'the server cut the lingering connection');
  });

  it('beyond the cap a refused connection closes at once, and the listener keeps answering', async () => {
    const listening = await listen({ maxBytes: MAX_BODY_BYTES, maxMs: 600_000, maxConnections: 2 });
    const held: StalledUpload[] = [];
    for (let i = 0; i < 5; i += 1) held.push(await stalled(listening.url));
    expect(held.map((upload) => upload.status)).toEqual([413, 413, 413, 413, 413]);
    // The two under the cap linger; the three beyond it are closed by the listener.
    await until(() => held.slice(2).every((upload) => upload.cut()), 'the extra closes');
    expect(listening.lingering()).toBe(2);
    expect(held.slice(0, 2).some((upload) => upload.cut())).toBe(false);
    expect(await post(listening.url, { size: 10 })).toMatchObject({ status: 200, body: '10' });
  });

  it('closing the listener cuts lingering connections instead of waiting for them', async () => {
    const listening = await listen({ maxBytes: MAX_BODY_BYTES, maxMs: 600_000, maxConnections: 8 });
    const upload = await stalled(listening.url);
    await until(() => listening.lingering() === 1, 'the refused connection lingers');
    // With the 10-minute time bound, a close that waited would outlast the test's limit.
    await listening.close(600_000);
    listener = undefined;
    await until(upload.cut, 'the lingering connection was cut');
  });

  it('answers 413, not 100 Continue, to Expect: 100-continue with a declared oversize length', async () => {
    const { url } = await listen();
    const refused = await post(url, {
      size: 2 * MAX_BODY_BYTES,
      headers: { Expect: '100-continue' },
    });
    expect(refused).toMatchObject({ status: 413, continued: false, sent: 0 });
    const accepted = await post(url, { size: 1000, headers: { Expect: '100-continue' } });
    expect(accepted).toMatchObject({ status: 200, body: '1000', continued: true });
  });

  it('every refusal before reading the body lingers, not only 413', async () => {
    const refuseAll = (_req: IncomingMessage, res: ServerResponse) =>
      writeRefusal(res, { status: 401, reason: 'missing bearer token' });
    const { url } = await listen(undefined, refuseAll);
    for (let run = 0; run < 10; run += 1) {
      const outcome = await post(url, { size: 2 * MAX_BODY_BYTES });
      expect(outcome, `run ${run}`).toMatchObject({ status: 401 });
      expect(outcome.error).toBeUndefined();
    }
  });

  it('a refusal of a request without a body keeps the connection open for the next one', async () => {
    const { url } = await listen(undefined, (_req, res) =>
      writeRefusal(res, { status: 404, reason: 'not found' }),
    );
    const agent = new Agent({ keepAlive: true });
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(url, { method: 'GET', agent }, (res) => {
        res.resume();
        resolve(res.headers);
      });
      req.on('error', reject);
      req.end();
    });
    agent.destroy();
    expect(headers.connection).toBe('keep-alive');
  });
});
