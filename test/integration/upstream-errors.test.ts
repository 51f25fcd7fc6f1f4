import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { FaultRule } from '../../src/sandbox/gitlab/server.js';
import { startHubzillaSandbox, type HubzillaSandbox } from '../../src/sandbox/hubzilla/server.js';
import { buildApp, type App } from '../../src/server/app.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { deadPort } from '../helpers/dead-port.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

const HUBZILLA_DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;

let t: TestApp;
/** The gateway's clock: after a 429, it holds that route's calls until Retry-After has passed on it. */
let clock = Date.now();

beforeAll(async () => {
  // Breaker off and short back-off: every fault here is persistent, so retries run out and each case stands alone.
  // The deadline is what the hang case waits out: long enough that no healthy field misses it on a busy machine.
  t = await createTestApp({
    env: { UPSTREAM_TIMEOUT_MS: '5000', BREAKER_THRESHOLD: '0', UPSTREAM_RETRY_BASE_MS: '5', UPSTREAM_MAX_RESPONSE_BYTES: '65536' },
    app: { now: () => clock },
  });
});

afterAll(async () => {
  await t.close();
});

afterEach(() => {
  t.sandbox.clearFaults();
  t.hubzilla.clearFaults();
});

/** Every fault the sandboxes can inject, and what the caller sees for it. */
const FAULTS: { name: string; fault: Omit<FaultRule, 'method' | 'path'>; code: string; status?: number | null; message?: RegExp }[] = [
  { name: 'HTTP 500', fault: { status: 500, body: '{"message":"500 Internal Server Error"}' }, code: 'UPSTREAM_ERROR', status: 500 },
  {
    name: 'HTTP 502 with an HTML page',
    fault: { status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } },
    code: 'UPSTREAM_ERROR',
    status: 502,
  },
  { name: 'HTTP 503', fault: { status: 503, body: '{"message":"503 Service Unavailable"}' }, code: 'UPSTREAM_ERROR', status: 503 },
  { name: 'HTTP 504', fault: { status: 504, body: '' }, code: 'UPSTREAM_ERROR', status: 504 },
  {
    name: 'an HTML error page with status 200',
    fault: { status: 200, body: '<html><body>Maintenance</body></html>', headers: { 'content-type': 'text/html' } },
    code: 'UPSTREAM_ERROR',
    status: 200,
    message: /not JSON/,
  },
  { name: 'a non-JSON body', fault: { status: 200, body: '{"id": 1, "name": ' }, code: 'UPSTREAM_ERROR', status: 200, message: /not JSON/ },
  {
    name: 'a body above UPSTREAM_MAX_RESPONSE_BYTES',
    fault: { status: 200, body: `[{"id": 1, "pad": "${'x'.repeat(70_000)}"}]` },
    code: 'UPSTREAM_ERROR',
    status: 200,
    message: /larger than 65536 bytes/,
  },
  // A Content-Length larger than the body: the upstream dies mid-response (before or after undici hands over the headers).
  {
    name: 'a truncated body',
    fault: { status: 200, body: '[{"id": 1, "na', headers: { 'content-length': '4096' } },
    code: 'UPSTREAM_ERROR',
    message: /could not be read/,
  },
  { name: 'a reset connection', fault: { reset: true }, code: 'UPSTREAM_UNAVAILABLE', status: null },
  { name: 'a response that never finishes', fault: { hang: true }, code: 'UPSTREAM_TIMEOUT', status: null },
  {
    name: '429 with Retry-After',
    fault: { status: 429, headers: { 'retry-after': '30' }, body: '{"message":"Retry later"}' },
    code: 'UPSTREAM_RATE_LIMITED',
    status: 429,
  },
];

function expectNoSecret(value: unknown) {
  const text = JSON.stringify(value);
  for (const secret of TEST_SECRETS) expect(text).not.toContain(secret);
}

describe('a GitLab fault reaches the caller as a coded error on the failing field only', () => {
  const query = `{ healthy: project(fullPath: "platform/core") { name } failing: projects(first: 1) { totalCount } channel { nickname } }`;

  it.each(FAULTS)('$name', async ({ fault, code, status, message }) => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', ...fault });
    const res = await t.gql(query, {}, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ healthy: { name: 'Core' }, failing: null, channel: { nickname: 'demo' } });
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0]).toMatchObject({
      path: ['failing'],
      extensions: { code, upstream: { name: 'gitlab', ...(status === undefined ? {} : { status }), method: 'GET', path: '/api/v4/projects' } },
    });
    if (message) expect(res.errors?.[0]?.message).toMatch(message);
    if (code === 'UPSTREAM_RATE_LIMITED') expect(res.errors?.[0]?.extensions?.upstream).toMatchObject({ retryAfterSeconds: 30 });
    expectNoSecret(res);
    // The process is up and the upstream healthy again once the fault is gone (and a 429's Retry-After has passed).
    t.sandbox.clearFaults();
    if (code === 'UPSTREAM_RATE_LIMITED') clock += 31_000;
    expect((await t.gql(`{ projects(first: 1) { totalCount } }`)).errors).toBeUndefined();
  });
});

describe('a Hubzilla fault reaches the caller as a coded error on the failing field only', () => {
  const query = `{ healthy: project(fullPath: "platform/core") { name } failing: channel { name } }`;

  it.each(FAULTS)('$name', async ({ fault, code, status }) => {
    t.hubzilla.addFault({ method: 'GET', path: /\/verify$/, ...fault });
    const res = await t.gql(query, {}, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ healthy: { name: 'Core' }, failing: { name: null } });
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0]).toMatchObject({
      path: ['failing', 'name'],
      extensions: { code, upstream: { name: 'hubzilla', ...(status === undefined ? {} : { status }), method: 'GET', path: '/api/z/1.0/verify' } },
    });
    expectNoSecret(res);
    t.hubzilla.clearFaults();
    if (code === 'UPSTREAM_RATE_LIMITED') clock += 31_000;
    const again = await t.gql(`{ channel { name } }`, {}, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(again.errors).toBeUndefined();
  });
});

describe('a GITLAB_URL that is not GitLab', () => {
  it("says so on a lookup, naming GITLAB_URL, where a 404 is not GitLab's own; GitLab's own 404 is still null", async () => {
    // A wrong path prefix, or another server: a 404 page for everything.
    t.sandbox.addFault({
      method: 'GET',
      path: '/api/v4/projects/platform%2Fcore',
      status: 404,
      body: '<html>Not Found</html>',
      headers: { 'content-type': 'text/html' },
    });
    const res = await t.gql('{ project(fullPath: "platform/core") { name } }');
    expect(res.data).toEqual({ project: null });
    expect(res.errors?.[0]).toMatchObject({ path: ['project'], extensions: { code: 'UPSTREAM_ERROR', upstream: { name: 'gitlab', status: 404 } } });
    expect(res.errors?.[0]?.message).toMatch(/GITLAB_URL/);
    t.sandbox.clearFaults();
    const missing = await t.gql('{ project(fullPath: "platform/no-such-project") { name } }');
    expect(missing).toMatchObject({ data: { project: null } });
    expect(missing.errors).toBeUndefined();
  });
});

describe('what an upstream wrote', () => {
  const SENTINEL = 'glpat-SENTINELupstreamtext000';

  it('never reaches the caller from a 5xx: a fixed message per status, the status in extensions', async () => {
    t.sandbox.addFault({
      method: 'GET',
      path: '/api/v4/projects',
      status: 500,
      body: JSON.stringify({ message: `NoMethodError at /opt/gitlab/app.rb:12, token ${SENTINEL}` }),
    });
    const res = await t.gql('{ projects(first: 1) { nodes { name } } }');
    expect(res.errors?.[0]).toMatchObject({ message: 'GitLab answered 500.', extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 500 } } });
    expect(JSON.stringify(res)).not.toMatch(/NoMethodError|SENTINEL/);
  });

  it('keeps a 4xx text meant for the caller, with any secret in it removed', async () => {
    const long = 'a1B2'.repeat(12);
    t.sandbox.addFault({
      method: 'GET',
      path: '/api/v4/projects',
      status: 403,
      body: JSON.stringify({ message: `403 Forbidden - token ${SENTINEL} and key ${long} are not allowed` }),
    });
    const res = await t.gql('{ projects(first: 1) { nodes { name } } }');
    expect(res.errors?.[0]).toMatchObject({
      message: 'GitLab answered 403: 403 Forbidden - token [Redacted] and key [Redacted] are not allowed.',
      extensions: { code: 'FORBIDDEN' },
    });
  });
});

describe('other upstream answers', () => {
  it('maps a 401 from GitLab to UNAUTHENTICATED without echoing the token', async () => {
    const res = await t.gql(`{ projects(first: 1) { totalCount } }`, {}, { token: 'wrong-token-123' });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ projects: null });
    expect(res.errors?.[0]).toMatchObject({
      path: ['projects'],
      extensions: { code: 'UNAUTHENTICATED', upstream: { name: 'gitlab', status: 401, method: 'GET', path: '/api/v4/projects' } },
    });
    // What happened and what fixes it, with GitLab's own words (scrubbed) in brackets.
    expect(res.errors?.[0]?.message).toBe(
      'GitLab refused the token (401 Unauthorized): it is wrong, expired or revoked; send a valid one as Private-Token or Authorization: Bearer.',
    );
    expect(JSON.stringify(res)).not.toContain('wrong-token-123');
  });

  it('maps a 403 to FORBIDDEN', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 403, body: '{"message":"403 Forbidden"}', times: 1 });
    const res = await t.gql(`{ healthy: project(fullPath: "platform/core") { name } failing: projects(first: 1) { totalCount } }`);
    expect(res.errors?.[0]).toMatchObject({ path: ['failing'], extensions: { code: 'FORBIDDEN', upstream: { status: 403 } } });
  });

  it('maps a 404 on a list to NOT_FOUND, while a lookup of a missing project is null', async () => {
    const res = await t.gql(`{ userProjects(user: "nobody-here", first: 1) { totalCount } project(fullPath: "nobody/here") { id } }`);
    expect(res.data).toEqual({ userProjects: null, project: null });
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0]).toMatchObject({
      path: ['userProjects'],
      extensions: { code: 'NOT_FOUND', upstream: { status: 404, path: '/api/v4/users/nobody-here/projects' } },
    });
  });
});

/** A loopback port that was free a moment ago and has nobody listening now. */
describe('an upstream that refuses connections', () => {
  let down: TestApp;
  beforeAll(async () => {
    down = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${await deadPort()}`), env: { UPSTREAM_RETRY_BASE_MS: '5' } });
  });
  afterAll(async () => {
    await down.close();
  });

  it('answers UPSTREAM_UNAVAILABLE for GitLab while Hubzilla fields resolve', async () => {
    const res = await down.gql(`{ projects(first: 1) { totalCount } channel { nickname } }`, {}, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.data).toEqual({ projects: null, channel: { nickname: 'demo' } });
    expect(res.errors?.[0]).toMatchObject({ path: ['projects'], extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: { name: 'gitlab', status: null } } });
  });

  describe('Hubzilla', () => {
    let app: App;
    let hub: HubzillaSandbox;
    let url: URL;
    beforeAll(async () => {
      hub = await startHubzillaSandbox();
      app = buildApp({
        config: loadConfig({ UPSTREAM_RETRY_BASE_MS: '5', LOG_FILE: process.env.LOG_FILE, LOG_LEVEL: process.env.LOG_LEVEL }, []),
        gitlabUrl: new URL(down.sandbox.url),
        hubzillaUrl: new URL(`http://127.0.0.1:${await deadPort()}`),
      });
      url = await app.listen(0, '127.0.0.1');
    });
    afterAll(async () => {
      await app.close();
      await hub.close();
    });

    it('answers UPSTREAM_UNAVAILABLE for Hubzilla while GitLab fields resolve', async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'demo-token', 'x-hubzilla-authorization': HUBZILLA_DEMO },
        body: JSON.stringify({ query: '{ project(fullPath: "platform/core") { name } channel { name } }' }),
      });
      const res = (await response.json()) as { data: unknown; errors: { path: unknown; extensions: unknown }[] };
      expect(res.data).toEqual({ project: { name: 'Core' }, channel: { name: null } });
      expect(res.errors[0]).toMatchObject({
        path: ['channel', 'name'],
        extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: { name: 'hubzilla', status: null } },
      });
    });
  });
});
