import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

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

describe('GraphiQL', () => {
  it('opens on /graphql with the example query and the demo token, served from the gateway', async () => {
    const response = await fetch(t.url, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('query Projects');
    expect(html).not.toMatch(/unpkg\.com|cdn\.jsdelivr/);
  });
});
