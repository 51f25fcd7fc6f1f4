/**
 * The upstream budget against callers who are not honest and upstreams that
 * refuse: over real HTTP against the sandboxes, on a clock the test moves.
 * Each case here was reproduced against the gateway before it held.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MANUAL_CLOCK_START } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const CORE = '{ project(fullPath: "platform/core") { name starCount } }';
const CORE_PATH = '/api/v4/projects/platform%2Fcore';
const STAR = 'mutation { projectStar(input: { id: "platform/core" }) { changed errors { message } } }';
const DEMO_HUB = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const WRONG_HUB = `Basic ${Buffer.from('demo:not-the-password').toString('base64')}`;

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
    const refused = await t.gql('mutation { channelItemPost(input: { body: "not mine to post" }) { errors { message } } }', {}, {
      headers: { 'x-hubzilla-authorization': WRONG_HUB },
    });
    expect(JSON.stringify(refused)).toMatch(/UNAUTHENTICATED/);
    await t.gql(stream, {}, { headers: { 'x-hubzilla-authorization': DEMO_HUB } });
    expect(streamCalls()).toBe(1);
  });
});
