import { describe, expect, it } from 'vitest';
import { REDACTED, scrub, scrubText } from '../../src/server/logger.js';

describe('log scrubbing', () => {
  it('redacts credential headers and secret fields at any depth, and keeps Sudo', () => {
    const value = {
      req: {
        headers: {
          'private-token': 'a',
          authorization: 'Bearer b',
          'job-token': 'c',
          'x-hubzilla-authorization': 'Basic d',
          'x-gitlab-token': 'e',
          cookie: 'f',
          sudo: 'alice',
        },
      },
      connectionParams: { 'Private-Token': 'g' },
      hook: { url: 'https://example.com', token: 'h', nested: [{ runners_token: 'i', password: 'j', channel_prvkey: 'k', prvkey: 'l' }] },
    };
    expect(scrub(value)).toEqual({
      req: {
        headers: {
          'private-token': REDACTED,
          authorization: REDACTED,
          'job-token': REDACTED,
          'x-hubzilla-authorization': REDACTED,
          'x-gitlab-token': REDACTED,
          cookie: REDACTED,
          sudo: 'alice',
        },
      },
      connectionParams: REDACTED,
      hook: {
        url: 'https://example.com',
        token: REDACTED,
        nested: [{ runners_token: REDACTED, password: REDACTED, channel_prvkey: REDACTED, prvkey: REDACTED }],
      },
    });
  });

  it('redacts Bearer and Basic payloads and credential query parameters inside text and errors', () => {
    expect(scrubText('sent Bearer abc.def and Basic ZGVtbzpkZW1vLXBhc3M= to /x?private_token=tok&a=1&access_token=t2')).toBe(
      'sent Bearer [Redacted] and Basic [Redacted] to /x?private_token=[Redacted]&a=1&access_token=[Redacted]',
    );
    // Prose about the schemes is not a credential; any GitLab token in any text is, the caller's or another's.
    expect(scrubText('send Basic or Bearer credentials')).toBe('send Basic or Bearer credentials');
    expect(scrubText('GitLab said: token glpat-AbCdEf123456789012 and runner GR1348941xyzXYZ12345 are revoked')).toBe(
      'GitLab said: token [Redacted] and runner [Redacted] are revoked',
    );
    const error = Object.assign(new Error('upstream said Bearer secret-123'), { token: 'secret-123' });
    expect(scrub(error)).toMatchObject({ type: 'Error', message: 'upstream said Bearer [Redacted]', token: REDACTED });
  });
});
