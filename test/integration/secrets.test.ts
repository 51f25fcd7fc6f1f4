/**
 * Secrets never reach a response (the schema has no field for them), and no credential appears in a response, an
 * error, its extensions, or an upstream call it was not meant for. (The
 * logs of the whole run are checked by test/global-setup.ts.)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type GraphQLResponse, type TestApp } from '../helpers/app.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
const HUBZILLA_DEMO = basic('demo', 'demo-pass');

let t: TestApp;
let runnersToken: string;
/** Every response of this file, for the final scan. */
const responses: GraphQLResponse[] = [];

async function gql(query: string, options: { token?: string | null; headers?: Record<string, string> } = {}) {
  const res = await t.gql(query, {}, options);
  responses.push(res);
  return res;
}

/** Secrets the sandboxes hold that no caller asked for. */
function sandboxSecrets(): string[] {
  return [runnersToken, 'BEGIN PRIVATE', 'PRIVATE KEY', 'password_hash', 'channel_prvkey', 'prvkey', 'seeded-hook-secret'];
}

beforeAll(async () => {
  t = await createTestApp();
  const res = await fetch(`${t.sandbox.url}/api/v4/projects/1`, { headers: { 'private-token': 'alice-token' } });
  runnersToken = ((await res.json()) as { runners_token: string }).runners_token;
  expect(runnersToken).toMatch(/^[0-9a-f]{30}$/);
});

afterAll(async () => {
  await t.close();
});

describe('secrets in responses', () => {
  it('has no field for the runner registration token, which GitLab sends to every Maintainer', async () => {
    const refused = await gql(`{ project(id: "1") { runnersToken } }`, { token: 'alice-token' });
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0]?.message).toMatch(/Cannot query field "runnersToken" on type "Project"/);
    // GitLab sent it to alice with the project: no field of the response holds it.
    const full = await gql(
      `{ project(id: "1") { id name description ciConfigPath importUrl statistics { repositorySize } } projects(first: 20) { nodes { id name } } }`,
      {
        token: 'alice-token',
      },
    );
    expect(full.errors).toBeUndefined();
    expect(JSON.stringify(full)).not.toContain(runnersToken);
  });

  it('never returns a hook token', async () => {
    const res = await gql(`{ project(id: "1") { hooks(first: 50) { nodes { id url pushEvents enableSslVerification } } } }`, { token: 'alice-token' });
    expect(res.errors).toBeUndefined();
    expect(JSON.stringify(res)).not.toMatch(/token|secret/i);
  });

  it('strips keys, password hashes and salts from a Hubzilla export', async () => {
    const res = await gql(`{ channel { export } }`, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.errors).toBeUndefined();
    const text = JSON.stringify(res);
    expect(text.length).toBeGreaterThan(500);
    for (const secret of ['PRIVATE KEY', 'prvkey', 'password', 'salt', 'demo-pass']) expect(text).not.toContain(secret);
  });
});

describe('credentials in errors and upstream calls', () => {
  it('puts no credential into an error, its message or its extensions', async () => {
    const failures = await Promise.all([
      gql(`{ projects(first: 1) { totalCount } }`, { token: 'wrong-token-abc' }),
      gql(`{ projects(first: 1) { totalCount } }`, { headers: { authorization: 'Bearer bearer-secret-xyz' }, token: null }),
      gql(`{ projects(first: 1) { totalCount } }`, { headers: { sudo: 'root' } }),
      gql(`{ project(id: "2") { jobs { nodes { id } } } }`, { headers: { 'job-token': 'job-secret-123' }, token: null }),
      gql(`{ channel { name } }`, { headers: { 'x-hubzilla-authorization': basic('demo', 'not-the-password') } }),
      gql(`{ channel { name } }`, { headers: { 'x-hubzilla-authorization': basic('demo', 'a:b') } }),
    ]);
    expect(failures.filter((res) => res.errors?.length).length).toBeGreaterThanOrEqual(5);
    const text = JSON.stringify(failures);
    for (const secret of ['wrong-token-abc', 'bearer-secret-xyz', 'job-secret-123', 'not-the-password', basic('demo', 'not-the-password').slice(6), 'a:b']) {
      expect(text).not.toContain(secret);
    }
  });

  it('masks an unexpected error in every mode', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/1', status: 200, body: '{"id": 1, "name": {"nested": "object"}, "visibility": 7}', times: 3 });
    const res = await gql(`{ project(id: "1") { name visibility } }`, { token: 'alice-token' });
    t.sandbox.clearFaults();
    for (const error of res.errors ?? []) {
      expect(JSON.stringify(error)).not.toMatch(/stack|at [A-Za-z]+ \(|alice-token/);
    }
  });

  it('sends GitLab credentials only to GitLab and Hubzilla credentials only to Hubzilla', async () => {
    t.resetCalls();
    t.resetHubzillaCalls();
    await gql(`{ project(id: "1") { name } channel { name } }`, { token: 'alice-token', headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO, sudo: 'demo' } });
    const gitlabText = JSON.stringify(t.calls());
    const hubzillaText = JSON.stringify(t.hubzillaCalls());
    expect(gitlabText).toContain('alice-token');
    expect(gitlabText).not.toContain(HUBZILLA_DEMO.slice(6));
    expect(hubzillaText).toContain(HUBZILLA_DEMO.slice(6));
    expect(hubzillaText).not.toContain('alice-token');
    expect(t.hubzillaCalls().every((c) => c.headers.sudo === undefined && c.headers['private-token'] === undefined)).toBe(true);
    // Query-string credentials are forwarded as headers: no token in any upstream URL.
    await fetch(new URL(`${t.url.pathname}?private_token=alice-token&query=${encodeURIComponent('{ project(id: "1") { name } }')}`, t.url), {
      headers: { 'graphql-preflight': '1' },
    });
    for (const call of t.calls()) expect(JSON.stringify(call.query)).not.toContain('alice-token');
  });

  it('leaves no sandbox secret and no test credential in any response of this file', () => {
    const text = JSON.stringify(responses.map((r) => ({ data: r.data, errors: r.errors })));
    for (const secret of [...sandboxSecrets(), ...TEST_SECRETS]) expect(text).not.toContain(secret);
  });
});

describe('import URLs with credentials', () => {
  // GitLab sends safe_import_url, and the sandbox does too; a server (or proxy) that sent the raw URL would hand the
  // caller the mirror's password, so the gateway strips userinfo itself. Only a stub upstream can show that.
  it('hands on the URL without the user and password it holds', async () => {
    const fixture = JSON.parse(readFileSync(new URL('../fixtures/gitlab-entities/project.json', import.meta.url), 'utf8')) as {
      body: Record<string, unknown>;
    };
    const secret = 'glpat-SENTINELimporturl0000';
    const upstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...fixture.body, import_url: `https://oauth2:${secret}@github.com/example/mirror.git` }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const stubbed = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`) });
    try {
      const res = await stubbed.gql<{ project: { importUrl: string } }>(`{ project(id: "${String(fixture.body.id)}") { importUrl } }`);
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ project: { importUrl: 'https://github.com/example/mirror.git' } });
      expect(JSON.stringify(res)).not.toContain('SENTINEL');
    } finally {
      await stubbed.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });
});
