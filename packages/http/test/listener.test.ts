import { upload as post } from '@slivingdoc/testkit/upload';
import { afterEach, describe, expect, it } from 'vitest';
import {
  isLoopbackHost,
  KEEP_ALIVE_TIMEOUT_MS,
  type Listener,
  MAX_BODY_BYTES,
  PublicBindError,
  readBody,
  startListener,
  writeRefusal,
} from '../src/index';

let listener: Listener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

const echoSize = async (
  req: Parameters<Parameters<typeof startListener>[1]>[0],
  res: Parameters<Parameters<typeof startListener>[1]>[1],
) => {
  const body = await readBody(req, res);
  if (!body.ok) return writeRefusal(res, body);
  res.end(String(body.body.length));
};

describe('startListener', () => {
  it('binds loopback on a free port and serves', async () => {
    listener = await startListener(
      { host: '127.0.0.1', port: 0 },
      (req, res) => void echoSize(req, res),
    );
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}`);
    expect(await post(`${listener.url}/`, { size: 10 })).toMatchObject({ status: 200, body: '10' });
  });

  it('refuses a non-loopback bind without allowPublic, and warns with it', async () => {
    await expect(
      startListener({ host: '0.0.0.0', port: 0 }, () => undefined),
    ).rejects.toBeInstanceOf(PublicBindError);
    const warnings: string[] = [];
    listener = await startListener(
      { host: '0.0.0.0', port: 0, allowPublic: true, onWarning: (m) => warnings.push(m) },
      () => undefined,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/not encrypted/);
  });

  it('keeps an idle connection open longer than a fetch client does (announced to it)', async () => {
    listener = await startListener({ host: '127.0.0.1', port: 0 }, (_req, res) => res.end('ok'));
    const answer = await fetch(`${listener.url}/`);
    expect(await answer.text()).toBe('ok');
    expect(answer.headers.get('keep-alive')).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
  });

  it('tells loopback from other addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com'])
      expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('readBody', () => {
  it('reads a body of exactly 1 MiB and refuses 2 MiB with 413, declared or streamed', async () => {
    listener = await startListener(
      { host: '127.0.0.1', port: 0 },
      (req, res) => void echoSize(req, res),
    );
    expect(await post(listener.url, { size: MAX_BODY_BYTES })).toMatchObject({
      status: 200,
      body: String(MAX_BODY_BYTES),
    });
    for (const chunked of [false, true]) {
      const answer = await post(listener.url, { size: 2 * MAX_BODY_BYTES, chunked });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body ?? '')).toMatchObject({ error: { message: /larger than/ } });
    }
  });
});
