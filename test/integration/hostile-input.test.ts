import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const SECRET = 'hostile-input-webhook-secret-01';
const HUBZILLA_DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { GITLAB_WEBHOOK_SECRET: SECRET, WEBHOOK_MAX_BYTES: '65536' } });
});

afterAll(async () => {
  await t.close();
});

afterEach(() => {
  t.resetCalls();
  t.resetHubzillaCalls();
});

/** Every path the sandboxes were asked for stays one encoded segment per id: no `..`, `/` or NUL got through raw. */
function expectNoCraftedPath() {
  for (const call of [...t.calls(), ...t.hubzillaCalls()]) {
    expect(call.path).not.toMatch(/\/\.\.?(\/|$)|\0|\/\//);
    expect(call.path).toMatch(/^\/api\/(v4|z\/1\.0)\//);
  }
}

describe('hostile ids', () => {
  it.each([
    { name: 'a ../ path', fullPath: '../../users' },
    { name: 'an encoded slash', fullPath: 'platform%2Fcore/..%2F..%2Fusers' },
    { name: 'an encoded NUL', fullPath: 'platform/core%00' },
    { name: 'a raw NUL', fullPath: 'platform/core\u0000.json' },
    { name: 'unicode', fullPath: 'plätform/cörę/\u202e\ud83d\ude00' },
    { name: 'a query string', fullPath: 'platform/core?private_token=admin-token' },
  ])('looks up $name as one encoded segment and finds nothing', async ({ fullPath }) => {
    const res = await t.gql(`query($p: String) { project(fullPath: $p) { id } }`, { p: fullPath });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ project: null });
    const calls = t.calls();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.path).toBe(`/api/v4/projects/${encodeURIComponent(fullPath)}`);
    expectNoCraftedPath();
  });

  it('refuses an overlong full path before any call', async () => {
    const res = await t.gql(`query($p: String) { project(fullPath: $p) { id } }`, { p: `a/${'b'.repeat(5000)}` });
    expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(t.calls()).toHaveLength(0);
  });

  it.each([
    { name: 'a global id of another type', id: 'gid://duograph/Job/1/1001' },
    { name: 'a global id with a path', id: 'gid://duograph/Project/../../users' },
    { name: 'an overlong number', id: '9'.repeat(400) },
    { name: 'a NUL', id: '1\u0000' },
  ])('refuses $name as a project id without a call', async ({ id }) => {
    const res = await t.gql(`query($id: ID) { project(id: $id) { id } }`, { id });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.calls()).toHaveLength(0);
  });

  it.each([
    { name: 'a quote', address: "x' OR '1'='1@example.com" },
    { name: 'a percent wildcard', address: '%@%' },
    { name: 'a NUL', address: 'demo\u0000@example.com' },
    { name: 'an overlong value', address: `${'a'.repeat(300)}@example.com` },
  ])('refuses an xchan address with $name without a call', async ({ address }) => {
    const res = await t.gql(`query($a: String) { xchan(address: $a) { name } }`, { a: address }, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.hubzillaCalls()).toHaveLength(0);
  });

  it('refuses a file hash with LIKE wildcards without a call', async () => {
    const res = await t.gql(`{ channel { file(hash: "%") { filename } } }`, {}, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(t.hubzillaCalls()).toHaveLength(0);
  });

  it('sends a crafted download path nowhere', async () => {
    for (const path of [
      '/downloads/gitlab/projects/1/jobs/1001/../../../../users',
      '/downloads/gitlab/projects/..%2F..%2Fusers/jobs/1/trace',
      '/downloads/hubzilla/files/%25',
    ]) {
      const response = await fetch(new URL(path, t.url), { headers: { 'private-token': 'demo-token' } });
      await response.arrayBuffer();
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
    }
    expectNoCraftedPath();
  });
});

describe('Sudo', () => {
  it('is refused by GitLab for a non-admin: FORBIDDEN, and the header went nowhere else', async () => {
    const res = await t.gql(`{ projects(first: 1) { totalCount } }`, {}, { headers: { sudo: 'root' } });
    expect(res.data).toEqual({ projects: null });
    expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(t.hubzillaCalls().every((c) => c.headers.sudo === undefined)).toBe(true);
  });
});

async function postWebhook(body: string, headers: Record<string, string | undefined>) {
  const response = await fetch(new URL('/webhooks/gitlab', t.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Job Hook', ...headers } as Record<string, string>,
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

describe('hostile webhooks', () => {
  it.each([
    { name: 'no token', headers: {}, body: '{}', status: 401 },
    { name: 'a wrong token of the same length', headers: { 'x-gitlab-token': SECRET.replace(/.$/, 'x') }, body: '{}', status: 401 },
    { name: 'a wrong token of another length', headers: { 'x-gitlab-token': 'wrong-token' }, body: '{}', status: 401 },
    { name: 'a huge body', headers: { 'x-gitlab-token': SECRET }, body: `{"pad":"${'x'.repeat(200_000)}"}`, status: 413 },
    { name: 'malformed JSON', headers: { 'x-gitlab-token': SECRET }, body: '{"object_kind": "build", ', status: 400 },
    { name: 'a JSON array', headers: { 'x-gitlab-token': SECRET }, body: '[1,2,3]', status: 400 },
  ])('answers $status to $name', async ({ headers, body, status }) => {
    expect(await postWebhook(body, headers)).toBe(status);
    expect(t.calls()).toHaveLength(0);
  });
});

describe('hostile GraphQL documents', () => {
  it('answers a deeply nested document with a clear error, not a 500', async () => {
    const res = await t.gql(`{ ${'project(fullPath: "a/b") { forkedFrom { '.repeat(1000)} id ${'} } '.repeat(1000)} }`);
    expect(res.status).toBeLessThan(500);
    expect(res.errors?.[0]?.message).toMatch(/limit/);
    expect(t.calls()).toHaveLength(0);
  });

  it('answers a huge string literal with 413', async () => {
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ projects(search: "${'a'.repeat(2_000_000)}") { totalCount } }` }),
    });
    expect(response.status).toBe(413);
    expect(t.calls()).toHaveLength(0);
  });
});

describe('hostile multipart requests', () => {
  const upload = (operations: string, map: string, files: number) => {
    const form = new FormData();
    form.append('operations', operations);
    form.append('map', map);
    for (let i = 0; i < files; i++) form.append(String(i), new Blob(['hello']), `f${i}.txt`);
    return fetch(t.url, { method: 'POST', headers: { 'private-token': 'demo-token', 'graphql-preflight': '1' }, body: form });
  };
  const operations = JSON.stringify({
    query: 'mutation($f: File!) { projectUpload(input: { id: "demo/playground", file: $f }) { upload { markdown } errors { message } } }',
    variables: { f: null },
  });

  it.each([
    { name: 'a map that is not JSON', map: '{"0": [', files: 1 },
    { name: 'a map to a path that does not exist', map: '{"0": ["variables.nothing.deeper"]}', files: 1 },
    { name: 'a map naming a missing file', map: '{"7": ["variables.f"]}', files: 1 },
    { name: 'too many files', map: JSON.stringify(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [String(i), ['variables.f']]))), files: 11 },
  ])('answers 4xx or a GraphQL error to $name, and uploads nothing', async ({ map, files }) => {
    const response = await upload(operations, map, files);
    const body = (await response.json()) as { data?: { projectUpload: unknown } | null; errors?: unknown[] };
    expect(response.status).toBeLessThan(500);
    expect(body.errors?.length ?? 0).toBeGreaterThan(0);
    expect(t.calls({ method: 'POST' })).toHaveLength(0);
  });

  it('refuses a multipart request without the preflight header', async () => {
    const form = new FormData();
    form.append('operations', operations);
    form.append('map', '{"0": ["variables.f"]}');
    form.append('0', new Blob(['hello']), 'a.txt');
    const response = await fetch(t.url, { method: 'POST', headers: { 'private-token': 'demo-token' }, body: form });
    await response.arrayBuffer();
    expect(response.status).toBe(403);
    expect(t.calls()).toHaveLength(0);
  });
});
