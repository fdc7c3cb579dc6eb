import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  allowedHostHeaders,
  bearerToken,
  checkHostAndOrigin,
  listenerOrigins,
  unauthorized,
} from '../src/index';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('bearerToken', () => {
  it('reads the token of a Bearer header, any scheme case', () => {
    expect(bearerToken(request({ authorization: 'Bearer abc' }))).toBe('abc');
    expect(bearerToken(request({ authorization: 'bearer abc' }))).toBe('abc');
  });
  it('reads nothing from another scheme or a malformed header', () => {
    expect(bearerToken(request({}))).toBeUndefined();
    expect(bearerToken(request({ authorization: 'Basic abc' }))).toBeUndefined();
    expect(bearerToken(request({ authorization: 'Bearer' }))).toBeUndefined();
    expect(bearerToken(request({ authorization: 'Bearer a b' }))).toBeUndefined();
  });
  it('never repeats the presented token in a refusal', () => {
    expect(JSON.stringify(unauthorized('secret-value'))).not.toContain('secret-value');
    expect(unauthorized(undefined).status).toBe(401);
  });
});

describe('checkHostAndOrigin', () => {
  const policy = { listenHost: '127.0.0.1', port: 4123 };
  it('lets in the listen address and loopback names with the port', () => {
    for (const host of ['127.0.0.1:4123', 'localhost:4123', 'LOCALHOST:4123', '[::1]:4123'])
      expect(checkHostAndOrigin(request({ host }), policy)).toEqual({ ok: true });
  });
  it('refuses a foreign Host (DNS rebinding), another port and a missing Host', () => {
    for (const headers of [{ host: 'evil.example:4123' }, { host: '127.0.0.1:80' }, {}] as Record<
      string,
      string
    >[])
      expect(checkHostAndOrigin(request(headers), policy)).toMatchObject({
        ok: false,
        status: 403,
      });
  });
  it('refuses any Origin unless allowed, exactly', () => {
    const host = '127.0.0.1:4123';
    expect(
      checkHostAndOrigin(request({ host, origin: 'http://evil.example' }), policy),
    ).toMatchObject({
      ok: false,
      status: 403,
      reason: 'Origin not allowed',
    });
    const withOrigins = { ...policy, allowedOrigins: listenerOrigins('127.0.0.1', 4123) };
    expect(
      checkHostAndOrigin(request({ host, origin: 'http://127.0.0.1:4123' }), withOrigins),
    ).toEqual({
      ok: true,
    });
    expect(
      checkHostAndOrigin(request({ host, origin: 'http://127.0.0.1:4124' }), withOrigins),
    ).toMatchObject({
      ok: false,
    });
  });
  it('names the concrete addresses of a wildcard or IPv6 bind, never the wildcard', () => {
    expect(allowedHostHeaders('0.0.0.0', 80)).toEqual(['localhost:80', '127.0.0.1:80', '[::1]:80']);
    expect(allowedHostHeaders('::1', 80)).toEqual(['[::1]:80', 'localhost:80', '127.0.0.1:80']);
    expect(allowedHostHeaders('10.0.0.5', 80)).toContain('10.0.0.5:80');
  });
});
