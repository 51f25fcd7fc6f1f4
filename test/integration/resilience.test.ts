import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const HUBZILLA_DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const TWO_FIELDS = `{ healthy: project(fullPath: "platform/core") { name } listed: projects(first: 1) { totalCount } }`;

describe('retries', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { UPSTREAM_TIMEOUT_MS: '3000', UPSTREAM_RETRY_BASE_MS: '5', BREAKER_THRESHOLD: '0' } });
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(() => {
    t.sandbox.clearFaults();
    t.hubzilla.clearFaults();
    t.resetCalls();
    t.resetHubzillaCalls();
  });

  it.each([
    { name: 'a 502', fault: { status: 502 } },
    { name: 'a 503', fault: { status: 503 } },
    { name: 'a 504', fault: { status: 504 } },
    { name: 'a reset connection', fault: { reset: true } },
  ])('retries a GET after $name and answers', async ({ fault }) => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', ...fault, times: 1 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.errors).toBeUndefined();
    expect(t.calls({ method: 'GET', path: '/api/v4/projects' })).toHaveLength(2);
  });

  it('gives up after UPSTREAM_RETRIES extra attempts', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 503 });
    const res = await t.gql(TWO_FIELDS);
    expect(res.errors?.[0]).toMatchObject({ path: ['listed'], extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 503 } } });
    expect(t.calls({ method: 'GET', path: '/api/v4/projects' })).toHaveLength(3);
  });

  it('does not retry a 500 or a body that is not JSON', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 500, times: 1 });
    expect((await t.gql(TWO_FIELDS)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 200, body: '<html>', times: 1 });
    expect((await t.gql(TWO_FIELDS)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect(t.calls({ method: 'GET', path: '/api/v4/projects' })).toHaveLength(2);
  });

  it("waits for a 429's Retry-After before the retry", async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 429, headers: { 'retry-after': '1' }, times: 1 });
    const started = Date.now();
    const res = await t.gql(TWO_FIELDS);
    expect(res.errors).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(t.calls({ method: 'GET', path: '/api/v4/projects' })).toHaveLength(2);
  });

  it('does not wait past the deadline: a long Retry-After fails at once with the wait in the error', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 429, headers: { 'retry-after': '120' }, times: 1 });
    const started = Date.now();
    const res = await t.gql(TWO_FIELDS);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'UPSTREAM_RATE_LIMITED', upstream: { status: 429, retryAfterSeconds: 120 } } });
    expect(t.calls({ method: 'GET', path: '/api/v4/projects' })).toHaveLength(1);
  });

  it.each([
    { name: 'a 503', fault: { status: 503 }, code: 'UPSTREAM_ERROR' },
    { name: 'a reset connection', fault: { reset: true }, code: 'UPSTREAM_UNAVAILABLE' },
  ])('never retries a GitLab POST after $name', async ({ fault, code }) => {
    t.sandbox.addFault({ method: 'POST', path: '/api/v4/projects/1/fork', ...fault, times: 1 });
    const res = await t.gql(`mutation { projectFork(input: { id: "1", namespacePath: "demo" }) { project { id } errors { message } } }`);
    expect(res.errors?.[0]?.extensions?.code).toBe(code);
    expect(t.calls({ method: 'POST', path: '/api/v4/projects/1/fork' })).toHaveLength(1);
  });

  it('never retries a job retry, play or a star', async () => {
    t.sandbox.addFault({ method: 'POST', path: /\/(retry|play|star)$/, status: 502 });
    await t.gql(`mutation { jobRetry(input: { id: "gid://duograph/Job/1/1002" }) { errors { message } } }`);
    await t.gql(`mutation { projectStar(input: { id: "1" }) { errors { message } } }`);
    expect(t.calls({ method: 'POST', path: /\/(retry|play|star)$/ })).toHaveLength(2);
  });

  it('never retries a Hubzilla item post', async () => {
    t.hubzilla.addFault({ method: 'POST', path: /item\/update$/, reset: true });
    const res = await t.gql(
      `mutation { channelItemPost(input: { body: "hello" }) { item { restId } errors { message } } }`,
      {},
      { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } },
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(t.hubzillaCalls({ method: 'POST', path: /item\/update$/ })).toHaveLength(1);
  });

  it('retries a Hubzilla GET after a 503', async () => {
    t.hubzilla.addFault({ method: 'GET', path: /\/verify$/, status: 503, times: 1 });
    const res = await t.gql(`{ channel { name } }`, {}, { headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO } });
    expect(res.errors).toBeUndefined();
    expect(t.hubzillaCalls({ method: 'GET', path: 'verify' })).toHaveLength(2);
  });
});

describe('the circuit breaker', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { UPSTREAM_RETRIES: '0', BREAKER_THRESHOLD: '3', BREAKER_RESET_MS: '300' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('fails fast while GitLab is down, without calling it, and recovers by itself', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 503 });
    for (let i = 0; i < 3; i++) await t.gql(`{ projects(first: 1) { totalCount } }`);
    expect(t.app.gitlab.breaker.state).toBe('open');
    t.resetCalls();
    const res = await t.gql(TWO_FIELDS);
    expect(res.data).toEqual({ healthy: null, listed: null });
    expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'UPSTREAM_UNAVAILABLE', upstream: { name: 'gitlab', status: null } } });
    expect(res.errors?.[0]?.message).toMatch(/paused/);
    expect(t.calls()).toHaveLength(0);
    // Hubzilla has a breaker of its own, still closed.
    expect(t.app.hubzilla?.breaker.state).toBe('closed');

    t.sandbox.clearFaults();
    await vi.waitFor(() => expect(t.app.gitlab.breaker.state).toBe('half-open'), { timeout: 2000 });
    // Half-open lets one probe through; its success closes the breaker for everyone.
    expect((await t.gql(`{ projects(first: 1) { totalCount } }`)).errors).toBeUndefined();
    expect(t.app.gitlab.breaker.state).toBe('closed');
    expect((await t.gql(TWO_FIELDS)).errors).toBeUndefined();
  });

  it('lets one probe through when half-open, and opens again when it fails', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects', status: 502 });
    for (let i = 0; i < 3; i++) await t.gql(`{ projects(first: 1) { totalCount } }`);
    expect(t.app.gitlab.breaker.state).toBe('open');
    await vi.waitFor(() => expect(t.app.gitlab.breaker.state).toBe('half-open'), { timeout: 2000 });
    t.resetCalls();
    // Three different reads: identical ones in flight at once would share the probe's one call.
    const probes = await Promise.all([1, 2, 3].map((size) => t.gql(`{ projects(first: ${size}) { totalCount } }`)));
    expect(probes.map((r) => r.errors?.[0]?.extensions?.code).sort()).toEqual(['UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
    expect(t.calls()).toHaveLength(1);
    expect(t.app.gitlab.breaker.state).toBe('open');
    t.sandbox.clearFaults();
  });
});

describe('the concurrency cap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { UPSTREAM_MAX_CONCURRENCY: '2' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps at most UPSTREAM_MAX_CONCURRENCY calls in flight to one upstream', async () => {
    t.sandbox.addFault({ method: 'GET', path: /^\/api\/v4\/projects\/\d+$/, delayMs: 60 });
    let peak = 0;
    let queued = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, t.app.gitlab.limiter.inFlight);
      queued = Math.max(queued, t.app.gitlab.limiter.queued);
    }, 5);
    const ids = [1, 2, 3, 4, 5, 6, 7];
    const res = await t.gql(`{ ${ids.map((id) => `p${id}: project(id: "${id}") { id }`).join(' ')} }`);
    clearInterval(sampler);
    t.sandbox.clearFaults();
    expect(res.errors).toBeUndefined();
    expect(peak).toBe(2);
    expect(queued).toBeGreaterThan(0);
  });
});

describe('a client that goes away', () => {
  let upstream: Server;
  let t: TestApp;
  const arrived: IncomingMessage[] = [];
  const closed: string[] = [];

  beforeAll(async () => {
    // A GitLab that never answers and tells when the gateway hangs up on it.
    upstream = createServer((req) => {
      arrived.push(req);
      req.socket.once('close', () => closed.push(req.url ?? ''));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    t = await createTestApp({ gitlabUrl: new URL(`http://127.0.0.1:${port}`), env: { UPSTREAM_TIMEOUT_MS: '30000' } });
  });
  afterAll(async () => {
    await t.close();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('aborts its upstream calls: the upstream sees the connection closed', async () => {
    const controller = new AbortController();
    const pending = fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: '{ projects(first: 1) { totalCount } }' }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(arrived).toHaveLength(1));
    expect(closed).toHaveLength(0);
    controller.abort();
    await pending;
    await vi.waitFor(() => expect(closed).toEqual(['/api/v4/projects?simple=true&page=1&per_page=1']), { timeout: 3000 });
    expect(t.app.gitlab.limiter.inFlight).toBe(0);
  });
});
