/**
 * The upstream budget against callers who are not honest and upstreams that
 * refuse: over real HTTP against the sandboxes, on a clock the test moves.
 * Each case here was reproduced against the gateway before it held.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MANUAL_CLOCK_START } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { wsClient, wsSubscribe } from '../helpers/subscriptions.js';

const CORE = '{ project(fullPath: "platform/core") { name starCount } }';
const CORE_PATH = '/api/v4/projects/platform%2Fcore';
const STAR = 'mutation { projectStar(input: { id: "platform/core" }) { changed errors { message } } }';
const DEMO_HUB = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const WRONG_HUB = `Basic ${Buffer.from('demo:not-the-password').toString('base64')}`;

/** Answers the gateway got from GitLab with this status, by its own metric. */
async function upstreamStatus(t: TestApp, status: number): Promise<number> {
  const metric = await t.app.metrics.registry.getSingleMetric('duograph_upstream_requests_total')?.get();
  return (metric?.values ?? []).filter((v) => v.labels.upstream === 'gitlab' && v.labels.status === String(status)).reduce((sum, v) => sum + v.value, 0);
}

describe('one GitLab budget per identity GitLab counts', () => {
  let t: TestApp;
  let clock = MANUAL_CLOCK_START;
  beforeAll(async () => {
    // GitLab's limit is 10 calls a minute per user and per IP, and the gateway knows it.
    t = await createTestApp({
      sandbox: { clock: 'manual', rateLimitPerMinute: 10, extraTokens: 1 },
      // The test's own address is a proxy: X-Forwarded-For names each request's client.
      env: { GITLAB_RATE_LIMIT_PER_MINUTE: '10', TRUSTED_PROXIES: '127.0.0.1' },
      app: { now: () => clock },
    });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    // A fresh minute on both clocks, past any refusal the gateway remembers.
    clock += 3_600_000;
    t.sandbox.advance(3_600_000);
    t.sandbox.clearFaults();
    t.resetCalls();
  });

  it('invented tokens draw on the anonymous budget, one address only its share, each token one call; GitLab never has to refuse', async () => {
    // alice is known to the gateway before the flood.
    expect((await t.gql(CORE, {}, { token: 'alice-token' })).data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
    t.resetCalls();
    const before = await upstreamStatus(t, 429);
    const from = (address: string, token: string | null) => t.gql(CORE, {}, { token, headers: { 'x-forwarded-for': `198.51.100.1, ${address}` } });
    // One address: its share (ANONYMOUS_SHARE_PER_ADDRESS 0.25 of 10) is two lookups (GET /user), each a 401.
    const one = [];
    for (let i = 0; i < 3; i++) one.push(await from('203.0.113.7', `invented-a${i}`));
    expect(one.slice(0, 2).map((a) => a.errors?.[0]?.extensions?.code)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
    expect(one[2]?.errors?.[0]?.message).toMatch(/anonymous callers \(and credentials GitLab has not yet accepted\) from this address/);
    expect(t.calls({ path: '/api/v4/user' })).toHaveLength(2);
    // Another address is not shut out, anonymous or not.
    expect((await from('203.0.113.8', null)).data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
    // Invented tokens from many addresses spend the anonymous budget as GitLab counts it, and no further.
    const many = [];
    for (let i = 0; i < 12; i++) many.push(await from(`203.0.113.${20 + (i % 6)}`, `invented-b${i}`));
    expect(t.calls({ path: '/api/v4/user' })).toHaveLength(9);
    expect(many.at(-1)?.errors?.[0]?.message).toMatch(/budget of anonymous callers and of credentials GitLab has not yet accepted is spent/);
    // A refused token is refused again without a call, with when it may be tried again.
    const again = await from('203.0.113.30', 'invented-a0');
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', upstream: { retryAfterSeconds: 30 } });
    expect(again.errors?.[0]?.message).toMatch(/refused these credentials \(401\); they are not sent again for 30 s/);
    expect(t.sandbox.requests.filter((r) => r.path.startsWith('/api/v4/'))).toHaveLength(10);
    expect(await upstreamStatus(t, 429)).toBe(before);
    // A real user's budget is untouched.
    expect((await t.gql(CORE, {}, { token: 'alice-token' })).data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
  });

  it('charges a call to the anonymous budget while GitLab cannot say who a token is, and asks again next time', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/user', status: 500, times: 1 });
    // The lookup fails: the read still goes out, counted as anonymous, and its answer stands.
    // (From an address of its own: the lookup and the read both count in the address's share of the anonymous budget.)
    const asBob = (address: string) => t.gql(CORE, {}, { token: 'bob-token', headers: { 'x-forwarded-for': address } });
    expect((await asBob('203.0.113.40')).data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
    expect(t.calls({ path: '/api/v4/user' })).toHaveLength(1);
    // Not remembered: the next call asks again, and from then on bob is bob.
    await asBob('203.0.113.41');
    await asBob('203.0.113.41');
    expect(t.calls({ path: '/api/v4/user' })).toHaveLength(2);
  });

  it('counts one user once, whatever header spells the token and whichever of the user’s tokens it is', async () => {
    const before = await upstreamStatus(t, 429);
    const spellings = [
      { token: 'demo-token' },
      { token: null, headers: { authorization: 'Bearer demo-token' } },
      { token: null, headers: { authorization: 'bearer demo-token' } },
      // user-1-token is demo's second token.
      { token: 'user-1-token' },
    ];
    const answers = [];
    for (let round = 0; round < 2; round++) for (const options of spellings) answers.push(await t.gql(CORE, {}, options));
    // Four lookups and four reads spend demo's ten; the rest is refused by the gateway, not by GitLab.
    expect(answers.filter((a) => a.data?.project)).toHaveLength(6);
    expect(answers.slice(6).map((a) => a.errors?.[0]?.message)).toEqual([
      expect.stringMatching(/budget of this GitLab user is spent/),
      expect.stringMatching(/budget of this GitLab user is spent/),
    ]);
    expect(t.sandbox.requests.filter((r) => r.path.startsWith('/api/v4/'))).toHaveLength(10);
    expect(await upstreamStatus(t, 429)).toBe(before);
    // A job token counts against its job's user (alice's, for the sandbox's job 1013).
    for (let i = 0; i < 8; i++) await t.gql(CORE, {}, { token: 'alice-token' });
    const asJob = await t.gql(CORE, {}, { token: null, headers: { 'job-token': 'sandbox-ci-job-token-1013' } });
    expect(asJob.errors?.[0]?.message).toMatch(/budget of this GitLab user is spent/);
    expect(t.calls({ path: '/api/v4/job' })).toHaveLength(1);
    expect(await upstreamStatus(t, 429)).toBe(before);
  });
});

describe('a 429 from GitLab holds back every token of its user', () => {
  let t: TestApp;
  const clock = MANUAL_CLOCK_START;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual', extraTokens: 1 }, env: { GITLAB_RATE_LIMIT_PER_MINUTE: '100' }, app: { now: () => clock } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('closes the user, not the header spelling', async () => {
    // Both of demo's tokens are known to the gateway (looked up once each).
    for (const token of ['demo-token', 'user-1-token']) expect((await t.gql(CORE, {}, { token })).errors).toBeUndefined();
    t.sandbox.addFault({
      method: 'GET',
      path: CORE_PATH,
      status: 429,
      headers: { 'Retry-After': '40', 'RateLimit-Name': 'throttle_authenticated_api', 'RateLimit-Limit': '100' },
      body: 'Retry later\n',
      times: 1,
    });
    expect((await t.gql(CORE)).errors?.[0]?.extensions?.code).toBe('UPSTREAM_RATE_LIMITED');
    t.resetCalls();
    const other = await t.gql(CORE, {}, { token: null, headers: { authorization: 'Bearer user-1-token' } });
    expect(other.errors?.[0]?.message).toMatch(/rate limiting these credentials; no call is sent for 40 s/);
    // Bearer user-1-token is a new spelling: looked up (its user is demo), then held back without its read.
    expect(t.calls({ path: CORE_PATH })).toHaveLength(0);
    // alice is another user.
    expect((await t.gql(CORE, {}, { token: 'alice-token' })).errors).toBeUndefined();
  });
});

describe("GitLab's own count, where it sends one", () => {
  let t: TestApp;
  const clock = MANUAL_CLOCK_START;
  beforeAll(async () => {
    // GitLab sends RateLimit-* on every answer (its rate_limiting_headers_for_unthrottled_requests flag), limit 10 a minute.
    t = await createTestApp({ sandbox: { clock: 'manual', rateLimitPerMinute: 10, rateLimitHeaders: true }, app: { now: () => clock } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('follows RateLimit-Observed, so calls the same user made elsewhere count too, and GitLab never has to refuse', async () => {
    // The gateway learns the limit and who demo is.
    expect((await t.gql(CORE)).data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
    // Another tool of demo's spends five calls straight at GitLab.
    for (let i = 0; i < 5; i++) expect((await fetch(`${t.sandbox.url}${CORE_PATH}`, { headers: { 'private-token': 'demo-token' } })).status).toBe(200);
    const before = await upstreamStatus(t, 429);
    t.resetCalls();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await t.gql(CORE));
    // The lookup of who demo is (GitLab's 7th call of demo's), then reads: GitLab's count on their answers tells the gateway
    // that three were left, and it refuses the fourth itself.
    expect(answers.map((a) => (a.data?.project ? 'ok' : a.errors?.[0]?.extensions?.code))).toEqual(['ok', 'ok', 'ok', 'UPSTREAM_RATE_LIMITED']);
    expect(t.calls()).toHaveLength(4);
    expect(await upstreamStatus(t, 429)).toBe(before);
  });
});

describe('the inbound allowance reserves before it runs, and charges subscriptions', () => {
  let t: TestApp;
  let clock = MANUAL_CLOCK_START;
  beforeAll(async () => {
    t = await createTestApp({
      sandbox: { clock: 'manual' },
      env: { INBOUND_CALLS_PER_MINUTE: '5', POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' },
      app: { now: () => clock },
    });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    clock += 3_600_000;
    t.resetCalls();
  });

  it('lets no more of twenty concurrent queries of one caller reach GitLab than its allowance', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => t.gql(`{ project(id: "${i + 1}") { name } }`, {}, { token: 'alice-token' })));
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(15);
    for (const answer of refused) expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
    // Five reads of projects; the one lookup of who alice is is the gateway's, not hers.
    expect(t.calls({ path: /^\/api\/v4\/projects\/\d+$/ })).toHaveLength(5);
  });

  it('gives back what an operation reserved and did not spend', async () => {
    // Estimated at two calls, answered with one (the second lookup of the same project is the first's).
    const twice = '{ a: project(id: "999999") { name } b: project(id: "999999") { name } }';
    for (let i = 0; i < 4; i++) expect((await t.gql(twice, {}, { token: 'bob-token' })).status).toBe(200);
    expect(t.calls({ path: '/api/v4/projects/999999' })).toHaveLength(4);
    const refused = await t.gql(twice, {}, { token: 'bob-token' });
    expect(refused.errors?.[0]?.message).toMatch(/has 1 left; the operation is estimated at 2/);
  });

  it('charges a subscription’s first read and its polls to its caller', async () => {
    const client = wsClient(t);
    const admitted = [];
    const refused = [];
    for (const jobId of [2001, 2002, 2003, 2004, 2005, 2006]) {
      const sub = wsSubscribe(client, `subscription { jobStatusUpdated(projectId: "7", jobId: "${jobId}") { restId status } }`);
      const first = await sub.next(60_000);
      if (first.errors?.[0]?.extensions?.code === 'RATE_LIMITED') refused.push(first);
      else admitted.push(sub);
    }
    // Each subscription reserves its first read, a call of demo's, and so are its polls: six do not fit in five.
    expect(admitted.length).toBeLessThanOrEqual(5);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]?.errors?.[0]?.message).toMatch(/has 0 left; the operation is estimated at 1\./);
    const firstReads = t.calls({ path: /^\/api\/v4\/projects\/7\/jobs\/200\d$/ }).length;
    expect(firstReads).toBeLessThanOrEqual(5);
    // Once the pollers have polled, demo has nothing left for a query.
    await vi.waitFor(() => expect(t.calls({ path: /^\/api\/v4\/projects\/7\/jobs/ }).length).toBeGreaterThan(5), { timeout: 60_000, interval: 10 });
    const after = await t.gql('{ project(id: "1") { name } }');
    expect(after.status).toBe(429);
    await client.dispose();
  });
});

describe('only a write the upstream accepted (or may have) drops stored answers', () => {
  let t: TestApp;
  let clock = MANUAL_CLOCK_START;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { CACHE_MAX_AGE_MS: '60000', BREAKER_THRESHOLD: '1' }, app: { now: () => clock } });
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(() => {
    clock += 600_000;
    t.sandbox.clearFaults();
    t.resetCalls();
    t.resetHubzillaCalls();
  });

  it('an anonymous star GitLab refuses with 401 drops nobody’s project', async () => {
    await t.gql(CORE);
    const refused = await t.gql<{ projectStar: null }>(STAR, {}, { token: null });
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(t.calls({ method: 'POST', path: `${CORE_PATH}/star` })).toHaveLength(1);
    await t.gql(CORE);
    expect(t.calls({ method: 'GET', path: CORE_PATH })).toHaveLength(1);
  });

  it('a write never sent (the breaker open) drops nothing; one that reached GitLab and got a 5xx does', async () => {
    await t.gql(CORE);
    t.sandbox.addFault({ method: 'POST', path: /\/star$/, status: 500, body: '{"message":"500 Internal Server Error"}', times: 1 });
    const failed = await t.gql(STAR);
    expect(failed.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    // The 500 may have come after the star was made: demo's project is read again.
    await t.gql(CORE);
    expect(t.calls({ method: 'GET', path: CORE_PATH })).toHaveLength(2);
    // BREAKER_THRESHOLD 1: two 503s open the breaker (one retried GET), and the star is refused before it is sent.
    t.sandbox.addFault({ method: 'GET', path: /\/projects\/7$/, status: 503, times: 3 });
    await t.gql('{ project(id: "7") { name } }');
    const unsent = await t.gql(STAR);
    expect(unsent.errors?.[0]?.message).toMatch(/calls are paused/);
    expect(t.calls({ method: 'POST', path: `${CORE_PATH}/star` })).toHaveLength(1);
    // Nothing was dropped: demo's project is still served, from the cache, while GitLab's calls are paused.
    expect((await t.gql(CORE)).data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
    expect(t.calls({ method: 'GET', path: CORE_PATH })).toHaveLength(2);
  });

  it('a Hubzilla post with a wrong password drops no Hubzilla answer', async () => {
    const stream = '{ channel { stream(first: 5) { nodes { body } } } }';
    await t.gql(stream, {}, { headers: { 'x-hubzilla-authorization': DEMO_HUB } });
    const streamCalls = () => t.hubzillaCalls({ method: 'GET', path: /^channel\/stream/ }).length;
    expect(streamCalls()).toBe(1);
    const refused = await t.gql(
      'mutation { channelItemPost(input: { body: "not mine to post" }) { errors { message } } }',
      {},
      {
        headers: { 'x-hubzilla-authorization': WRONG_HUB },
      },
    );
    expect(JSON.stringify(refused)).toMatch(/UNAUTHENTICATED/);
    await t.gql(stream, {}, { headers: { 'x-hubzilla-authorization': DEMO_HUB } });
    expect(streamCalls()).toBe(1);
  });
});
