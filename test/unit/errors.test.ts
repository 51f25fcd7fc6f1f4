import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { codeForStatus, codeForTransportError, encodePath, encodeQuery, upstreamMessage } from '../../src/upstreams/http.js';

describe('error mapping', () => {
  it('maps upstream statuses to the closed code set', () => {
    expect(codeForStatus(400)).toBe('BAD_USER_INPUT');
    expect(codeForStatus(401)).toBe('UNAUTHENTICATED');
    expect(codeForStatus(403)).toBe('FORBIDDEN');
    expect(codeForStatus(404)).toBe('NOT_FOUND');
    expect(codeForStatus(409)).toBe('BAD_USER_INPUT');
    expect(codeForStatus(429)).toBe('UPSTREAM_RATE_LIMITED');
    for (const status of [500, 502, 503, 504]) expect(codeForStatus(status)).toBe('UPSTREAM_ERROR');
  });

  it('maps transport failures to timeout or unavailable', () => {
    expect(codeForTransportError(new errors.HeadersTimeoutError())).toBe('UPSTREAM_TIMEOUT');
    expect(codeForTransportError(new errors.BodyTimeoutError())).toBe('UPSTREAM_TIMEOUT');
    expect(codeForTransportError(new DOMException('timed out', 'TimeoutError'))).toBe('UPSTREAM_TIMEOUT');
    expect(codeForTransportError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe('UPSTREAM_UNAVAILABLE');
    expect(codeForTransportError(new errors.SocketError('other side closed'))).toBe('UPSTREAM_UNAVAILABLE');
    expect(codeForTransportError(new errors.ResponseExceededMaxSizeError())).toBe('UPSTREAM_ERROR');
  });

  it('reads GitLab error bodies of every shape', () => {
    expect(upstreamMessage({ message: '404 Project Not Found' })).toBe('404 Project Not Found');
    expect(upstreamMessage({ error: '404 Not Found' })).toBe('404 Not Found');
    expect(upstreamMessage({ message: { name: ['has already been taken'] } })).toBe('{"name":["has already been taken"]}');
    expect(upstreamMessage({ error: 'insufficient_scope', error_description: 'needs sudo' })).toBe('needs sudo');
    expect(upstreamMessage('plain')).toBeNull();
    expect(upstreamMessage({ message: 'x'.repeat(1000) })).toHaveLength(300);
  });
});

describe('paths and queries', () => {
  it('encodes every path segment', () => {
    expect(encodePath(['projects', 'group/project'])).toBe('projects/group%2Fproject');
    expect(encodePath(['projects', '../../users'])).toBe('projects/..%2F..%2Fusers');
    expect(encodePath(['projects', 'a%2Fb', 'x?y#z'])).toBe('projects/a%252Fb/x%3Fy%23z');
  });

  it('writes arrays as repeated name[] and drops absent values', () => {
    expect(encodeQuery({ scope: ['running', 'failed'], simple: true, search: undefined, x: null })).toBe('?scope%5B%5D=running&scope%5B%5D=failed&simple=true');
    expect(encodeQuery({})).toBe('');
  });
});

describe('serialization errors', () => {
  it('are masked with the field path, without the value graphql-js printed', async () => {
    const { GraphQLString, locatedError } = await import('graphql');
    const { maskError } = await import('../../src/server/mask-error.js');
    let thrown: unknown;
    try {
      GraphQLString.serialize({ token: 'glpat-SENTINELserialize000' });
    } catch (error) {
      thrown = error;
    }
    expect(String(thrown)).toContain('glpat-SENTINEL');
    const masked = maskError(locatedError(thrown, [], ['project', 'name']), 'Unexpected error.') as import('graphql').GraphQLError;
    expect(masked.message).toBe("This field's value has the wrong type and cannot be shown.");
    expect(masked.path).toEqual(['project', 'name']);
    expect(masked.extensions).toEqual({ code: 'UPSTREAM_ERROR' });
  });
});
