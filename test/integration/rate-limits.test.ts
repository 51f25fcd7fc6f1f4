/**
 * GitLab's rate limits, as the sandbox plays them (Rack::Attack's
 * throttles, lib/gitlab/rack_attack.rb) and as the gateway lives with them:
 * after a 429, no call of that scope goes out until GitLab's Retry-After has
 * passed. Both clocks are the test's: the sandbox's manual one (its
 * throttle's windows) and the gateway's (how long a scope stays closed).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MANUAL_CLOCK_START } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { wsClient, wsSubscribe } from '../helpers/subscriptions.js';

const CORE = '{ project(fullPath: "platform/core") { name } }';
const CORE_PATH = '/api/v4/projects/platform%2Fcore';

let t: TestApp;
let clock = MANUAL_CLOCK_START;

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' }, app: { now: () => clock } });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  // A fresh window on both clocks: the sandbox's throttle and the gateway's closures.
  t.sandbox.advance(60_000);
  clock += 3_600_000;
  t.sandbox.setRateLimit(0);
  t.sandbox.clearFaults();
  t.resetCalls();
});

describe("GitLab's rate limits", () => {
  it('are played by the sandbox as Rack::Attack answers them: 429, Retry-After to the window’s end, RateLimit-* headers', async () => {
    t.sandbox.setRateLimit(2, true);
    const get = () => fetch(`${t.sandbox.url}${CORE_PATH}`, { headers: { 'private-token': 'demo-token' } });
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-name')).toBe('throttle_authenticated_api');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await get()).status).toBe(200);
    const refused = await get();
    expect(refused.status).toBe(429);
    expect(await refused.text()).toBe('Retry later\n');
    const reset = Number(refused.headers.get('ratelimit-reset'));
    const now = Math.floor(t.sandbox.now() / 1000);
    expect(Number(refused.headers.get('retry-after'))).toBe(reset - now);
    expect(reset % 60).toBe(0);
    expect(refused.headers.get('ratelimit-observed')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('content-type')).toBe('text/plain');
    // Another user, and anonymous callers (by IP), have counts of their own.
    expect((await fetch(`${t.sandbox.url}${CORE_PATH}`, { headers: { 'private-token': 'alice-token' } })).status).toBe(200);
    expect((await fetch(`${t.sandbox.url}/api/v4/projects/demo%2Fplayground`)).headers.get('ratelimit-name')).toBe('throttle_unauthenticated_api');
  });

  // Before the next test: its 429 teaches the gateway GitLab's limit (RateLimit-Limit: 1), which then holds for every test after it.
  it("closes only the route of an endpoint's own limit (no RateLimit-Name): the rest of the user's calls go on", async () => {
    t.sandbox.addFault({
      method: 'GET',
      path: /^\/api\/v4\/projects\/7\/jobs$/,
      status: 429,
      headers: { 'Retry-After': '30' },
      body: '{"message":"This endpoint has been requested too many times. Try again later."}',
      times: 1,
    });
    const jobs = '{ project(id: "7") { name jobs(first: 2) { nodes { restId } } } }';
    const first = await t.gql(jobs);
    expect(first.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: { retryAfterSeconds: 30 } });
    const second = await t.gql<{ project: { name: string; jobs: null } }>(jobs);
    expect(second.data?.project.name).toBe('Playground');
    expect(second.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: { retryAfterSeconds: 30 } });
    expect(t.calls({ path: '/api/v4/projects/7/jobs' })).toHaveLength(1);
    expect(t.calls({ path: '/api/v4/projects/7' })).toHaveLength(2);
  });

  it('after a 429, sends no call of that scope until Retry-After has passed, and fails each field at once with it; others go on', async () => {
    t.sandbox.setRateLimit(2);
    for (let i = 0; i < 2; i++) expect((await t.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
    const limited = await t.gql(CORE);
    expect(limited.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: { retryAfterSeconds: 60 } });
    expect(t.calls({ path: CORE_PATH })).toHaveLength(3);
    clock += 20_000;
    for (let i = 0; i < 3; i++) {
      const again = await t.gql(CORE);
      expect(again.data).toEqual({ project: null });
      expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: { retryAfterSeconds: 40 } });
      expect(again.errors?.[0]?.message).toMatch(/rate limiting these credentials; no call is sent for 40 s/);
    }
    expect(t.calls({ path: CORE_PATH })).toHaveLength(3);
    // alice's count is her own, at GitLab and here (her token looked up first: GitLab's limit is known now).
    expect((await t.gql(CORE, {}, { token: 'alice-token' })).data).toEqual({ project: { name: 'Core' } });
    // Once GitLab's window has turned, demo's calls go out again.
    clock += 40_001;
    t.sandbox.advance(60_000);
    expect((await t.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
    expect(t.calls({ path: CORE_PATH })).toHaveLength(5);
  });
});

describe('the call budget (GITLAB_RATE_LIMIT_PER_MINUTE, RATE_LIMIT_RESERVE)', () => {
  let b: TestApp;
  let now = MANUAL_CLOCK_START;
  beforeAll(async () => {
    // GitLab's limit is 10 calls a minute, and the gateway knows it: background work may spend half of it.
    b = await createTestApp({
      sandbox: { clock: 'manual', rateLimitPerMinute: 10 },
      env: { GITLAB_RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_RESERVE: '0.5', POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' },
      app: { now: () => now },
    });
  });
  afterAll(async () => {
    await b?.close();
  });

  it('lets pollers yield first, answers callers until the budget is spent, then fails fast; GitLab never has to refuse', async () => {
    // The token's first call is GitLab's answer to who it is (GET /user), counted against its user as GitLab counts it.
    for (let i = 0; i < 4; i++) expect((await b.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
    expect(b.calls({ path: '/api/v4/user' })).toHaveLength(1);
    // A subscription's first read is a caller's; its poller is background work, and the budget is down to the reserve.
    const client = wsClient(b);
    const sub = wsSubscribe(client, 'subscription { jobStatusUpdated(projectId: "7", jobId: "2001") { restId status } }');
    expect(await sub.next()).toMatchObject({ data: { jobStatusUpdated: { restId: 2001 } } });
    const key = [...(b.app.hub.pollers as unknown as { pollers: Map<string, unknown> }).pollers.keys()][0] ?? '';
    // Refused, the poller waits for the minute to turn (60 s), far past its 40 ms back-off, without a call.
    await vi.waitFor(() => expect(b.app.hub.pollers.dueIn(key)).toBeGreaterThan(30_000));
    expect(b.calls({ path: '/api/v4/projects/7/jobs/2001' })).toHaveLength(1);
    expect(b.calls({ path: '/api/v4/projects/7/jobs' })).toHaveLength(0);
    for (let i = 0; i < 4; i++) expect((await b.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
    const spent = await b.gql(CORE);
    expect(spent.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: { retryAfterSeconds: 60 } });
    expect(spent.errors?.[0]?.message).toMatch(/call budget of this GitLab user is spent for this minute; no call is sent for 60 s/);
    // Ten calls went out, none was refused by GitLab, and alice's budget is her own.
    expect(b.calls({ method: 'GET' }).filter((c) => c.headers['private-token'] === 'demo-token')).toHaveLength(10);
    expect((await b.gql(CORE, {}, { token: 'alice-token' })).data).toEqual({ project: { name: 'Core' } });
    await sub.stop();
    await client.dispose();
    // A new minute, on both clocks: demo's calls go out again.
    now += 60_000;
    b.sandbox.advance(60_000);
    expect((await b.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
  });
});

describe('the inbound allowance (INBOUND_CALLS_PER_MINUTE)', () => {
  let c: TestApp;
  let now = MANUAL_CLOCK_START;
  beforeAll(async () => {
    c = await createTestApp({ env: { INBOUND_CALLS_PER_MINUTE: '4', CACHE_MAX_AGE_MS: '600000' }, app: { now: () => now } });
  });
  afterAll(async () => {
    await c?.close();
  });

  it('charges the calls sent, not cached answers, and refuses an operation that would cost more than is left: 429 over HTTP, RATE_LIMITED over graphql-ws', async () => {
    expect((await c.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
    // Answers from the cache are free.
    for (let i = 0; i < 5; i++) expect((await c.gql(CORE)).data).toEqual({ project: { name: 'Core' } });
    // Three more calls: the allowance of four is spent.
    for (const id of [2, 6, 7]) expect((await c.gql(`{ project(id: "${id}") { name } }`)).errors).toBeUndefined();
    c.resetCalls();
    const refused = await c.gql('{ project(id: "8") { name } }');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 60 });
    expect(refused.errors?.[0]?.message).toMatch(/may cause 4 upstream calls a minute and has 0 left; the operation is estimated at 1/);
    expect(c.calls()).toHaveLength(0);
    const client = wsClient(c);
    const overWs = await new Promise<{ errors?: readonly { extensions?: Record<string, unknown> }[] }>((resolve, reject) => {
      client.subscribe({ query: '{ project(id: "8") { name } }' }, { next: resolve, error: reject, complete: () => {} });
    });
    expect(overWs.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 60 });
    await client.dispose();
    // Another caller has an allowance of its own; a new minute, a new allowance.
    expect((await c.gql('{ project(id: "8") { name } }', {}, { token: 'alice-token' })).errors).toBeUndefined();
    now += 60_000;
    expect((await c.gql('{ project(id: "8") { name } }')).errors).toBeUndefined();
  });
});
