import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { UPSTREAM_TIMEOUT_MS: '400' } });
});

afterAll(async () => {
  await t.close();
});

const TWO_FIELDS = `{ healthy: project(fullPath: "platform/core") { name } failing: projects(first: 1) { totalCount } }`;

describe('upstream failures reach the caller as coded errors on the failing field', () => {
  it('maps a 401 from GitLab to UNAUTHENTICATED without echoing the token', async () => {
    const res = await t.gql(`{ projects(first: 1) { totalCount } }`, {}, { token: 'wrong-token-123' });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ projects: null });
    expect(res.errors?.[0]).toMatchObject({
      path: ['projects'],
      extensions: { code: 'UNAUTHENTICATED', upstream: { name: 'gitlab', status: 401, method: 'GET', path: '/api/v4/projects' } },
    });
    expect(res.errors?.[0]?.message).toMatch(/401/);
    expect(JSON.stringify(res)).not.toContain('wrong-token-123');
  });

  it('maps a 500 to UPSTREAM_ERROR on that field only', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 500, body: '{"message":"500 Internal Server Error"}', times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.data).toEqual({ healthy: { name: 'Core' }, failing: null });
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0]).toMatchObject({ path: ['failing'], extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 500 } } });
  });

  it('maps a 403 to FORBIDDEN', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 403, body: '{"message":"403 Forbidden"}', times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.errors?.[0]).toMatchObject({ path: ['failing'], extensions: { code: 'FORBIDDEN', upstream: { status: 403 } } });
  });

  it('maps a 429 to UPSTREAM_RATE_LIMITED', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 429, headers: { 'retry-after': '1' }, body: '{"message":"Retry later"}', times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.errors?.[0]?.extensions?.code).toBe('UPSTREAM_RATE_LIMITED');
  });

  it('maps a 404 on a list to NOT_FOUND, while a lookup of a missing project is null', async () => {
    const res = await t.gql(`{ userProjects(user: "nobody-here", first: 1) { totalCount } project(fullPath: "nobody/here") { id } }`);
    expect(res.data).toEqual({ userProjects: null, project: null });
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0]).toMatchObject({ path: ['userProjects'], extensions: { code: 'NOT_FOUND', upstream: { status: 404, path: '/api/v4/users/nobody-here/projects' } } });
  });

  it('maps an HTML page with status 200 to UPSTREAM_ERROR', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 200, headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>', times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.data?.healthy).toEqual({ name: 'Core' });
    expect(res.errors?.[0]).toMatchObject({ path: ['failing'], extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 200 } } });
    expect(res.errors?.[0]?.message).toMatch(/not JSON/);
  });

  it('maps a response that never comes to UPSTREAM_TIMEOUT', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', hang: true, times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.data?.healthy).toEqual({ name: 'Core' });
    expect(res.errors?.[0]).toMatchObject({ path: ['failing'], extensions: { code: 'UPSTREAM_TIMEOUT', upstream: { status: null } } });
  });

  it('maps a reset connection to UPSTREAM_UNAVAILABLE', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', reset: true, times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.data?.healthy).toEqual({ name: 'Core' });
    expect(res.errors?.[0]).toMatchObject({ path: ['failing'], extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
  });

  it('keeps serving after failures', async () => {
    const res = await t.gql(`{ projects(first: 1) { totalCount } }`);
    expect(res.errors).toBeUndefined();
  });
});

describe('an upstream that refuses connections', () => {
  let down: TestApp;
  beforeAll(async () => {
    // A port that was free a moment ago and has nobody listening now.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    down = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${port}`) });
  });
  afterAll(async () => {
    await down.close();
  });

  it('answers UPSTREAM_UNAVAILABLE', async () => {
    const res = await down.gql(`{ projects(first: 1) { totalCount } }`);
    expect(res.data).toEqual({ projects: null });
    expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: { name: 'gitlab', status: null } } });
  });
});
