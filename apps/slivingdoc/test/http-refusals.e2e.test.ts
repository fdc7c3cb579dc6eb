import { spawn } from 'node:child_process';
import { MAX_BODY_BYTES } from '@slivingdoc/http';
import { until } from '@slivingdoc/testkit/until';
import {
  pushingUpload,
  type StalledUpload,
  stalledUpload,
  upload,
} from '@slivingdoc/testkit/upload';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, sandboxEnv } from './helpers/bin';
import { addToken, HubProcess, mcpHeaders, rawRequest, withConfigHome } from './helpers/http-hub';

const hubs: HubProcess[] = [];
const uploads: StalledUpload[] = [];
const stops: (() => void)[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  for (const held of uploads.splice(0)) held.destroy();
  for (const stop of stops.splice(0)) stop();
  for (const hub of hubs.splice(0)) await hub.stop('SIGKILL');
});

async function hubWithToken(args: string[] = []) {
  const env = withConfigHome(sandboxEnv());
  const token = addToken(env, 'alice');
  const hub = await HubProcess.start(args, env);
  hubs.push(hub);
  return { hub, token, url: hub.url };
}

/** Headers of an MCP POST, as `upload` takes them (Content-Length is its own). */
function postHeaders(url: string, token: string | undefined): Record<string, string> {
  return mcpHeaders(url, token);
}

const OVER = 2 * MAX_BODY_BYTES;

describe('serve --listen: a refused upload reads its refusal (lingering close)', () => {
  it('a slow writer 1 MiB over the limit reads 413 every time, declared or streamed; 401 and 403 likewise', async () => {
    const { url, token } = await hubWithToken();
    for (let run = 0; run < 10; run += 1) {
      for (const chunked of [false, true]) {
        const refused = await upload(url, {
          size: OVER,
          chunked,
          pauseMs: 2,
          headers: postHeaders(url, token),
        });
        expect(refused, `run ${run}, chunked ${chunked}`).toMatchObject({ status: 413 });
        expect(refused.error).toBeUndefined();
      }
      const unauthenticated = await upload(url, {
        size: OVER,
        pauseMs: 2,
        headers: postHeaders(url, undefined),
      });
      expect(unauthenticated, `run ${run}`).toMatchObject({ status: 401 });
      const foreign = await upload(url, {
        size: OVER,
        pauseMs: 2,
        headers: { ...postHeaders(url, token), Host: 'evil.example' },
      });
      expect(foreign, `run ${run}`).toMatchObject({ status: 403 });
    }
  });

  it('a client that keeps sending 64 MiB gets its 413, then the connection is cut once the byte bound is spent', async () => {
    const { url, token } = await hubWithToken();
    const size = 64 * 1024 * 1024;
    const headers = Object.entries(postHeaders(url, token))
      .filter(([name]) => name !== 'Host')
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const outcome = await pushingUpload(url, size, headers);
    expect(outcome.status).toBe(413);
    expect(outcome.ended).toMatch(/ECONNRESET|EPIPE|closed/);
    expect(outcome.sent).toBeLessThan(size);
  });

  it('more lingering uploads than the cap: the extra ones are closed at once, and the hub serves an agent meanwhile', async () => {
    const { hub, url, token } = await hubWithToken();
    const held: StalledUpload[] = [];
    // The cap is 32 (docs/hosts.md, "Refusals"): 40 refused uploads that never finish.
    for (let i = 0; i < 40; i += 1) {
      const stalled = await stalledUpload(
        url,
        10 * MAX_BODY_BYTES,
        `Authorization: Bearer ${token}\r\n`,
      );
      uploads.push(stalled);
      held.push(stalled);
    }
    expect(held.every((stalled) => stalled.status === 413)).toBe(true);
    const session = await hub.connect(token);
    const pulled = await session.call('notes_pull', {});
    expect(pulled.isError, pulled.text).toBe(false);
    await until(
      () => held.filter((stalled) => stalled.cut()).length >= 8,
      'the 8 uploads beyond the cap closed',
    );
    await session.close();
  });

  it('answers 413, not 100 Continue, to Expect: 100-continue with a declared oversize length', async () => {
    const { url, token } = await hubWithToken();
    const refused = await upload(url, {
      size: OVER,
      headers: { ...postHeaders(url, token), Expect: '100-continue' },
    });
    expect(refused).toMatchObject({ status: 413, continued: false, sent: 0 });
    // A body within the limit is let in (and, not being JSON, refused as such).
    const accepted = await upload(url, {
      size: 10,
      headers: { ...postHeaders(url, token), Expect: '100-continue' },
    });
    expect(accepted).toMatchObject({ status: 400, continued: true, sent: 10 });
  });

  it("a 413 on a session frees the token's in-flight place at once", async () => {
    const { hub, token } = await hubWithToken(['--token-calls', '1']);
    const session = await hub.connect(token);
    const headers = {
      ...mcpHeaders(hub.url, token),
      'Mcp-Session-Id': session.transport.sessionId!,
      'Mcp-Protocol-Version': '2025-06-18',
    };
    const refused = await upload(hub.url, { size: OVER, headers });
    expect(refused.status).toBe(413);
    const ping = await rawRequest(hub.url, {
      headers,
      body: '{"jsonrpc":"2.0","id":9,"method":"ping"}',
    });
    expect(ping.status).toBe(200);
  });
});

describe('view --listen: a refused upload reads its refusal', () => {
  it('401 before login and 413 past 1 MiB, read by a slow writer every time, with Connection: close', async () => {
    const env = withConfigHome(sandboxEnv());
    const view = spawn(process.execPath, [bin, 'view', '--listen', '127.0.0.1:0'], { env });
    stops.push(() => view.kill('SIGKILL'));
    const loginUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      view.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      view.once('exit', (code) => reject(new Error(`view exited ${code}`)));
    });
    const { origin, host } = new URL(loginUrl);
    const login = await rawRequest(loginUrl, { method: 'GET', headers: { Host: host } });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const revert = `${origin}/publications/1/revert`;
    const form = {
      Host: host,
      Origin: origin,
      'Content-Type': 'application/x-www-form-urlencoded',
    };
    for (let run = 0; run < 5; run += 1) {
      const anonymous = await upload(revert, { size: OVER, pauseMs: 2, headers: form });
      expect(anonymous, `run ${run}`).toMatchObject({ status: 401 });
      const oversize = await upload(revert, {
        size: OVER,
        pauseMs: 2,
        headers: { ...form, Cookie: cookie },
      });
      expect(oversize, `run ${run}`).toMatchObject({ status: 413, connection: 'close' });
      expect(oversize.error).toBeUndefined();
    }
    // The Proposals page's POSTs go through the same limit and lingering close.
    for (const action of ['approve', 'reject']) {
      const oversize = await upload(`${origin}/proposals/0123456789abcdef-1/${action}`, {
        size: OVER,
        pauseMs: 2,
        headers: { ...form, Cookie: cookie },
      });
      expect(oversize, action).toMatchObject({ status: 413, connection: 'close' });
      expect(oversize.error).toBeUndefined();
    }
  });
});
