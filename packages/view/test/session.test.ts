import type { IncomingMessage } from 'node:http';
import type { TokenGrant } from '@slivingdoc/http';
import { describe, expect, it } from 'vitest';
import { SESSION_COOKIE, Sessions } from '../src/session';

const grant = { name: 'ann' } as TokenGrant;
const request = (id: string) =>
  ({ headers: { cookie: `other=1; ${SESSION_COOKIE}=${id}` } }) as IncomingMessage;

describe('view sessions', () => {
  it('ends a session whose token was removed, and says so at every later request', () => {
    const sessions = new Sessions();
    const id = sessions.create('tok', grant);
    let tokens = new Set(['tok']);
    const verify = (token: string) => (tokens.has(token) ? grant : undefined);
    expect(sessions.of(request(id), verify)).toMatchObject({ grant: { name: 'ann' } });
    tokens = new Set();
    expect(sessions.of(request(id), verify)).toBe('ended');
    // The page's live poll may be the first request after the removal: the person's next
    // request is still told the session ended, even if the token comes back.
    tokens = new Set(['tok']);
    expect(sessions.of(request(id), verify)).toBe('ended');
    expect(sessions.of(request('unknown'), verify)).toBeUndefined();
    expect(sessions.of({ headers: {} } as IncomingMessage, verify)).toBeUndefined();
  });
});
