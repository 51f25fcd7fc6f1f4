import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { wsClient } from '../helpers/subscriptions.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

const QUERY = `{ projects(first: 1) { totalCount } }`;

describe('credential forwarding', () => {
  it('forwards Private-Token as received', async () => {
    t.resetCalls();
    await t.gql(QUERY);
    expect(t.calls()[0]?.headers['private-token']).toBe('demo-token');
    expect(t.calls()[0]?.headers.authorization).toBeUndefined();
  });

  it('answers a Sudo user GitLab does not know with its 404 naming the user, on every single read', async () => {
    const sudo = { token: 'admin-token', headers: { sudo: 'nobody' } };
    const reads = [
      '{ project(id: "1") { name } }',
      '{ node(id: "gid://duograph/Job/1/1001") { id } }',
      '{ node(id: "gid://duograph/ProjectHook/1/1") { id } }',
    ];
    for (const query of reads) {
      const res = await t.gql<Record<string, unknown>>(query, {}, sudo);
      expect(Object.values(res.data ?? {})).toEqual([null]);
      expect(res.errors?.[0]).toMatchObject({
        message: "GitLab answered 404: 404 User with ID or username 'nobody' Not Found.",
        extensions: { code: 'NOT_FOUND', upstream: { status: 404 } },
      });
    }
    // Without Sudo, an unknown project is still plain null.
    expect(await t.gql('{ project(id: "99999") { name } }', {}, { token: 'admin-token' })).toMatchObject({ data: { project: null } });
  });

  it('does not forward a Sudo header that comes without a token', async () => {
    t.resetCalls();
    const res = await t.gql(QUERY, {}, { token: null, headers: { sudo: 'alice' } });
    expect(res.errors).toBeUndefined();
    expect(t.calls()[0]?.headers.sudo).toBeUndefined();
  });

  it('forwards JOB-TOKEN as received, to the downloads GitLab takes it on, and never echoes it', async () => {
    // The sandbox's job token (job 1013, alice's) opens the artifacts of platform/core's pipelines.
    t.resetCalls();
    const response = await fetch(new URL('/downloads/gitlab/projects/1/jobs/1001/artifacts', t.url), { headers: { 'job-token': 'sandbox-ci-job-token-1013' } });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const sent = t.calls().find((c) => c.path.endsWith('/jobs/1001/artifacts'));
    expect(sent?.headers['job-token']).toBe('sandbox-ci-job-token-1013');
    expect(sent?.headers['private-token']).toBeUndefined();
    expect(JSON.stringify(Object.fromEntries(response.headers))).not.toContain('sandbox-ci-job-token-1013');
  });

  it('forwards Authorization: Bearer as received', async () => {
    t.resetCalls();
    const res = await t.gql(QUERY, {}, { token: null, headers: { authorization: 'Bearer demo-token' } });
    expect(res.errors).toBeUndefined();
    expect(t.calls()[0]?.headers.authorization).toBe('Bearer demo-token');
  });

  it("forwards Sudo for an admin, and GitLab's refusal for anyone else", async () => {
    t.resetCalls();
    const asDemo = await t.gql<{ projects: { totalCount: number } }>(
      `{ projects(first: 1, owned: true) { totalCount } }`,
      {},
      { token: 'admin-token', headers: { sudo: 'demo' } },
    );
    expect(asDemo.errors).toBeUndefined();
    expect(t.calls()[0]?.headers.sudo).toBe('demo');
    const refused = await t.gql(QUERY, {}, { headers: { sudo: 'alice' } });
    expect(refused.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN', upstream: { status: 403 } } });
    expect(refused.errors?.[0]?.message).toMatch(/Must be admin to use sudo/);
  });

  it('accepts the query-parameter forms and forwards them as headers, never in the URL', async () => {
    t.resetCalls();
    const response = await fetch(new URL('?private_token=demo-token&sudo=alice', t.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(response.status).toBe(200);
    const call = t.calls()[0];
    expect(call?.headers['private-token']).toBe('demo-token');
    expect(call?.headers.sudo).toBe('alice');
    expect(call?.query.private_token).toBeUndefined();
    t.resetCalls();
    await fetch(new URL('?access_token=demo-token', t.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERY }),
    });
    expect(t.calls()[0]?.headers.authorization).toBe('Bearer demo-token');
  });

  it('sends no cookie and no credential of another request', async () => {
    t.resetCalls();
    await Promise.all([t.gql(QUERY), t.gql(QUERY, {}, { token: 'alice-token' }), t.gql(QUERY, {}, { token: null })]);
    const tokens = t
      .calls()
      .map((c) => c.headers['private-token'] ?? null)
      .sort();
    expect(tokens).toEqual(['alice-token', 'demo-token', null].sort());
    expect(t.calls().every((c) => c.headers.cookie === undefined)).toBe(true);
  });

  it('refuses a malformed credential with a clear 400', async () => {
    const res = await t.gql(QUERY, {}, { token: 'x'.repeat(5000) });
    expect(res.status).toBe(400);
    expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(res.errors?.[0]?.message).toMatch(/private-token credential is malformed/);
  });
});

describe('credential mistakes', () => {
  const AUTH_HINT =
    'Authorization must be "Bearer <token>" (a GitLab OAuth2 or personal access token); a personal access token may also go alone in Private-Token. Hubzilla credentials go in X-Hubzilla-Authorization.';

  it.each(['demo-token', 'Token demo-token', 'Basic ZGVtbzpkZW1vLXBhc3M='])(
    'refuses Authorization: %s with 400 saying what to send, before any call',
    async (value) => {
      t.resetCalls();
      const res = await t.gql(QUERY, {}, { token: null, headers: { authorization: value } });
      expect(res.status).toBe(400);
      expect(res.errors?.[0]).toMatchObject({ message: AUTH_HINT, extensions: { code: 'BAD_USER_INPUT' } });
      expect(JSON.stringify(res)).not.toContain('demo-token');
      expect(t.calls()).toHaveLength(0);
    },
  );

  it('refuses it over SSE and in graphql-ws connectionParams alike', async () => {
    const sse = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'demo-token' },
      body: JSON.stringify({ query: 'subscription { jobStatusUpdated(projectId: "7") { name } }' }),
    });
    const text = await sse.text();
    expect(text).toContain(JSON.stringify(AUTH_HINT).slice(1, -1));
    const client = wsClient(t, { Authorization: 'demo-token' });
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
      client.on('closed', (event) => resolve(event as { code: number; reason: string }));
      client.subscribe({ query: '{ __typename }' }, { next: () => {}, error: () => {}, complete: () => {} });
    });
    expect(closed.code).toBe(4403);
    expect(closed.reason).toBe(Buffer.from(AUTH_HINT).subarray(0, 123).toString());
    await client.dispose();
  });

  it('says which near-miss credential header it ignored, over HTTP and in connectionParams, without its value', async () => {
    // platform/infra is private: read anonymously, it is not there.
    const res = await t.gql('{ project(id: "2") { name } }', {}, { token: null, headers: { private_token: 'demo-token' } });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ project: null });
    const hint = (res as { extensions?: { credentials?: { ignored: string[]; hint: string } } }).extensions?.credentials;
    expect(hint?.ignored).toEqual(['private_token']);
    expect(hint?.hint).toMatch(/^Ignored, not read as credentials: private_token\. The gateway reads Private-Token/);
    expect(JSON.stringify(res)).not.toContain('demo-token');
    const client = wsClient(t, { Private_Token: 'demo-token' });
    const overWs = await new Promise<{ extensions?: { credentials?: { ignored: string[] } } }>((resolve, reject) => {
      client.subscribe({ query: '{ project(id: "2") { name } }' }, { next: resolve as never, error: reject, complete: () => {} });
    });
    expect(overWs.extensions?.credentials?.ignored).toEqual(['private_token']);
    await client.dispose();
  });
});

describe('GraphiQL', () => {
  it('opens on /graphql with the example query and the demo token, served from the gateway', async () => {
    const response = await fetch(t.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('query Projects');
    expect(html).not.toMatch(/unpkg\.com|cdn\.jsdelivr/);
  });
});
