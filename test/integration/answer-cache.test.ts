/**
 * The upstream answer cache and shared reads, over real HTTP against the
 * sandboxes, on a clock the test moves (nothing here waits on wall time).
 * "Reads through the gateway" means GraphQL requests; where a test changes
 * the sandbox directly, it says so. Counts are the sandbox's own record of
 * the calls it received.
 */
import type { ExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { counter } from '../helpers/metrics.js';
import { expectOneCallPerScope, expectSharedFailureOnce, expectSharedReadOutlivesALeaver } from '../helpers/shared-reads.js';

const SECRET = 'answer-cache-webhook-secret-0123456789';
const DEMO_HUB = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const CORE = '{ project(fullPath: "platform/core") { name starCount } }';
const CORE_BY_ALIAS = '{ core: project(fullPath: "platform/core") { name starCount } }';
const CORE_PATH = '/api/v4/projects/platform%2Fcore';

let t: TestApp;
let clock = Date.now();

/** The cache lookups of one outcome counted so far, over every upstream and family. */
const lookups = (outcome: 'hit' | 'miss' | 'revalidated' | 'joined') => counter(t.app, 'duograph_upstream_cache_lookups_total', { outcome });
/** Whole answers served, kept or found stale, by the gateway's metric. */
const warmAnswers = (outcome: 'served' | 'kept' | 'stale') => counter(t.app, 'duograph_warm_answers_total', { outcome });
/** Calls the gateway sent upstream, by its own metric. */
const upstreamRequests = () => counter(t.app, 'duograph_upstream_requests_total');

const gets = (path: RegExp | string) => t.calls({ method: 'GET', path }).length;

beforeAll(async () => {
  t = await createTestApp({
    sandbox: { clock: 'manual' },
    env: {
      CACHE_MAX_AGE_MS: '5000',
      CACHE_WEBHOOK_MAX_AGE_MS: '60000',
      GITLAB_WEBHOOK_SECRET: SECRET,
      POLL_INTERVAL_MS: '600000',
      POLL_MAX_INTERVAL_MS: '600000',
    },
    app: { now: () => clock },
  });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(() => {
  // Past every entry's age: each test starts with nothing fresh.
  clock += 120_000;
  t.resetCalls();
  t.resetHubzillaCalls();
  t.sandbox.clearFaults();
});

describe('the answer cache', () => {
  it('answers a repeated read from the cache, then revalidates it with If-None-Match once past CACHE_MAX_AGE_MS', async () => {
    const first = await t.gql(CORE);
    expect(first.data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
    expect(gets(CORE_PATH)).toBe(1);
    clock += 4_999;
    const sent = await upstreamRequests();
    const hits = await lookups('hit');
    // The same operation again: its whole answer, kept, without reading the stored upstream answer again.
    expect((await t.gql(CORE)).data).toEqual(first.data);
    expect(await warmAnswers('served')).toBe(1);
    expect(await lookups('hit')).toBe(hits);
    // Another operation over the same project reads the stored answer: a hit is a lookup, not a call.
    expect((await t.gql(CORE_BY_ALIAS)).data).toEqual({ core: first.data?.project });
    expect(gets(CORE_PATH)).toBe(1);
    expect(await upstreamRequests()).toBe(sent);
    expect(await lookups('hit')).toBe(hits + 1);
    clock += 2;
    expect((await t.gql(CORE)).data).toEqual(first.data);
    const calls = t.calls({ method: 'GET', path: CORE_PATH });
    expect(calls).toHaveLength(2);
    // GitLab's Rack::ETag: a weak ETag of the body, sent back; the sandbox answered 304 and the entry was renewed.
    expect(calls[1]?.headers['if-none-match']).toMatch(/^W\/"[0-9a-f]{32}"$/);
    expect(await lookups('revalidated')).toBeGreaterThanOrEqual(1);
    expect((await t.gql(CORE)).data).toEqual(first.data);
    expect(gets(CORE_PATH)).toBe(2);
  });

  it('keeps each credential scope apart: a project one user may see never reaches another, in either order', async () => {
    const secret = '{ project(fullPath: "alice/secret-notes") { name } }';
    expect((await t.gql(secret, {}, { token: 'alice-token' })).data).toEqual({ project: { name: expect.any(String) } });
    expect((await t.gql(secret, {}, { token: 'demo-token' })).data).toEqual({ project: null });
    expect((await t.gql(secret, {}, { token: null })).data).toEqual({ project: null });
    // Each scope's own answer is cached for it: not found for demo, found for alice.
    expect((await t.gql(secret, {}, { token: 'demo-token' })).data).toEqual({ project: null });
    expect((await t.gql(secret, {}, { token: 'alice-token' })).data).toEqual({ project: { name: expect.any(String) } });
    expect(gets('/api/v4/projects/alice%2Fsecret-notes')).toBe(3);
    // The same token sent two ways is two scopes: nothing is shared on a guess.
    await t.gql(secret, {}, { token: null, headers: { authorization: 'Bearer alice-token' } });
    expect(gets('/api/v4/projects/alice%2Fsecret-notes')).toBe(4);
  });

  it('shares one call among identical reads in flight from different requests, and none across scopes', async () => {
    await expectOneCallPerScope(t, CORE, CORE_PATH, { project: { name: 'Core', starCount: expect.any(Number) } });
  });

  it('hands an upstream failure of a shared read to every waiter once, with its code, and never stores it', async () => {
    await expectSharedFailureOnce(t, CORE, CORE_PATH, { project: { name: 'Core', starCount: expect.any(Number) } });
  });

  it('cancels a shared read only when every waiter has gone', async () => {
    await expectSharedReadOutlivesALeaver(t, CORE, CORE_PATH, { project: { name: 'Core', starCount: expect.any(Number) } });
  });

  it('honours the caller: Cache-Control no-cache and max-age, and the same in an operation’s extensions', async () => {
    await t.gql(CORE);
    clock += 2_000;
    await t.gql(CORE, {}, { headers: { 'cache-control': 'max-age=3' } });
    expect(gets(CORE_PATH)).toBe(1);
    await t.gql(CORE, {}, { headers: { 'cache-control': 'max-age=1' } });
    await t.gql(CORE, {}, { headers: { 'cache-control': 'no-cache' } });
    const viaExtensions = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: CORE, extensions: { cacheControl: 'no-cache', upstreamCache: true } }),
    });
    const body = (await viaExtensions.json()) as { extensions?: { upstreamCache?: Record<string, number> } };
    // Each of the last three asked the upstream, which confirmed the stored answer (304).
    expect(body.extensions?.upstreamCache).toEqual({ hits: 0, revalidated: 1, joined: 0, misses: 0 });
    expect(t.calls({ method: 'GET', path: CORE_PATH }).map((c) => c.headers['if-none-match'] !== undefined)).toEqual([false, true, true, true]);
  });

  it('takes cacheControl from a graphql-ws operation’s extensions, and reports per operation', async () => {
    await t.gql(CORE);
    const client = createClient({
      url: t.url.href.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { 'Private-Token': 'demo-token' },
      retryAttempts: 0,
    });
    const run = (extensions: Record<string, unknown>) =>
      new Promise<ExecutionResult>((resolve, reject) => {
        let result: ExecutionResult = {};
        client.subscribe({ query: CORE, extensions }, { next: (value) => (result = value as ExecutionResult), error: reject, complete: () => resolve(result) });
      });
    try {
      expect((await run({ upstreamCache: true })).extensions?.upstreamCache).toEqual({ hits: 1, revalidated: 0, joined: 0, misses: 0 });
      const fresh = await run({ cacheControl: 'no-cache', upstreamCache: true });
      expect(fresh.data).toEqual({ project: { name: 'Core', starCount: expect.any(Number) } });
      expect(fresh.extensions?.upstreamCache).toEqual({ hits: 0, revalidated: 1, joined: 0, misses: 0 });
      expect(gets(CORE_PATH)).toBe(2);
    } finally {
      await client.dispose();
    }
  });

  it('says in the HTTP answer how long it may be kept, and by whom', async () => {
    const get = (query: string) =>
      fetch(`${t.url}?query=${encodeURIComponent(query)}`, { headers: { 'private-token': 'demo-token', 'graphql-preflight': '1' } });
    const miss = await get(CORE);
    expect(miss.headers.get('cache-control')).toBe('private, no-cache');
    expect(miss.headers.get('vary')).toMatch(/Authorization.*Private-Token.*Job-Token.*Sudo.*X-Hubzilla-Authorization/);
    clock += 1_500;
    // 5 s plain age, 1.5 s gone: 3 whole seconds left.
    expect((await get(CORE)).headers.get('cache-control')).toBe('private, max-age=3');
    const post = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: CORE }),
    });
    expect(post.headers.get('cache-control')).toBe('no-store');
    const mutation = await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }');
    expect(mutation.headers.get('cache-control')).toBe('no-store');
  });

  it('lets a mutation drop what it changes for every scope: a star, a job retry', async () => {
    await t.gql(CORE, {}, { token: 'alice-token' });
    await t.gql(CORE);
    await t.gql('mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    const star = await t.gql<{ projectStar: { changed: boolean; project: { starCount: number } } }>(
      'mutation { projectStar(input: { id: "platform/core" }) { changed project { starCount } } }',
      {},
      { token: 'alice-token' },
    );
    expect(star.data?.projectStar.changed).toBe(true);
    // demo's answer was cached before alice's star: it is dropped, and demo reads the new count.
    const after = await t.gql<{ project: { starCount: number } }>(CORE);
    expect(after.data?.project.starCount).toBe(star.data?.projectStar.project.starCount);

    const jobs = '{ project(fullPath: "demo/playground") { jobs(first: 3) { nodes { restId status } } } }';
    const before = await t.gql<{ project: { jobs: { nodes: { restId: number }[] } } }>(jobs);
    await t.gql(jobs);
    expect(gets(/\/projects\/7\/jobs$/)).toBe(1);
    const retried = await t.gql<{ jobRetry: { job: { restId: number } } }>(
      'mutation { jobRetry(input: { id: "gid://duograph/Job/7/2001" }) { job { restId } } }',
    );
    const newest = await t.gql<{ project: { jobs: { nodes: { restId: number }[] } } }>(jobs, {}, { token: 'alice-token' });
    const again = await t.gql<{ project: { jobs: { nodes: { restId: number }[] } } }>(jobs);
    expect(again.data?.project.jobs.nodes[0]?.restId).toBe(retried.data?.jobRetry.job.restId);
    expect(newest.data?.project.jobs.nodes[0]?.restId).toBe(retried.data?.jobRetry.job.restId);
    expect(again.data?.project.jobs.nodes[0]?.restId).not.toBe(before.data?.project.jobs.nodes[0]?.restId);
  });

  it.each([
    {
      name: 'projectUpdate',
      read: '{ project(id: "7") { name } }',
      write: 'mutation { projectUpdate(input: { id: "demo/playground", name: "Playground Renamed" }) { errors { message } } }',
      after: { project: { name: 'Playground Renamed' } },
    },
    {
      name: 'projectArchive',
      read: '{ project(id: "7") { archived } }',
      write: 'mutation { projectArchive(input: { id: "gid://duograph/Project/7" }) { errors { message } } }',
      after: { project: { archived: true } },
    },
    {
      name: 'projectUnarchive',
      read: '{ project(id: "7") { archived } }',
      write: 'mutation { projectUnarchive(input: { id: "7" }) { errors { message } } }',
      after: { project: { archived: false } },
    },
    {
      name: 'projectHookCreate',
      read: '{ project(id: "7") { hooks(first: 50) { nodes { url } } } }',
      write: 'mutation { projectHookCreate(input: { projectId: "7", url: "http://127.0.0.1:9/cache-test" }) { errors { message } } }',
      after: { project: { hooks: { nodes: expect.arrayContaining([{ url: 'http://127.0.0.1:9/cache-test' }]) } } },
    },
  ])('lets $name drop the answers it changes, for every scope', async ({ read, write, after }) => {
    // An admin and the owner (demo) both hold the answer; demo changes it; both read the change at once.
    await t.gql(read, {}, { token: 'admin-token' });
    await t.gql(read);
    const changed = await t.gql<Record<string, { errors: unknown[] }>>(write);
    expect(Object.values(changed.data ?? {})[0]?.errors).toEqual([]);
    expect((await t.gql(read, {}, { token: 'admin-token' })).data).toEqual(after);
    expect((await t.gql(read)).data).toEqual(after);
  });

  it('keeps the jobs of a project whose webhooks reach the gateway for the webhook age once one of its events arrived, and drops them at the next', async () => {
    const register = await t.gql('mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }');
    expect(register.data).toEqual({ jobStatusWebhookRegister: { errors: [] } });
    const playground = '{ project(id: "7") { jobs(first: 5) { nodes { restId status } } } }';
    const core = '{ project(id: "1") { jobs(first: 5) { nodes { restId status } } } }';
    type Jobs = { project: { jobs: { nodes: { restId: number; status: string }[] } } };
    const running = await t.gql<Jobs>(playground);
    expect(running.data?.project.jobs.nodes.find((j) => j.restId === 2003)?.status).toBe('RUNNING');
    t.resetCalls();
    clock += 30_000;
    // Registering the receiver is not enough (GitLab may not reach it): past the plain age, the jobs are read again.
    await t.gql(playground);
    expect(gets(/\/projects\/7\/jobs$/)).toBe(1);
    // The sandbox moves the job on and posts its webhook to the gateway (a change made directly in the sandbox): now they are fed.
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    const failed = await t.gql<Jobs>(playground);
    expect(failed.data?.project.jobs.nodes.find((j) => j.restId === 2003)?.status).toBe('FAILED');
    expect(gets(/\/projects\/7\/jobs$/)).toBe(2);
    await t.gql(core);
    clock += 30_000;
    await t.gql(playground);
    await t.gql(core);
    // Past the plain age: platform/core's jobs are read again; demo/playground's live on (webhook-fed).
    expect(gets(/\/projects\/7\/jobs$/)).toBe(2);
    expect(gets(/\/projects\/1\/jobs$/)).toBe(2);
    // The next event drops them at once.
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    await t.gql(playground);
    expect(gets(/\/projects\/7\/jobs$/)).toBe(3);
    // Only what changed: platform/core's entry (read after the clock moved) stays.
    await t.gql(core);
    expect(gets(/\/projects\/1\/jobs$/)).toBe(2);
  });

  it('drops a Hubzilla channel stream when the gateway posts to it', async () => {
    const stream = '{ channel { stream(first: 50) { nodes { body } } } }';
    const hz = (query: string, variables: Record<string, unknown> = {}) =>
      t.gql<{ channel: { stream: { nodes: { body: string }[] } } }>(query, variables, { headers: { 'x-hubzilla-authorization': DEMO_HUB } });
    await hz(stream);
    await hz(stream);
    const streamCalls = () => t.hubzillaCalls({ method: 'GET', path: /^channel\/stream/ }).length;
    expect(streamCalls()).toBe(1);
    const posted = await hz('mutation($input: ChannelItemPostInput!) { channelItemPost(input: $input) { errors { message } } }', {
      input: { body: 'posted through the cache test' },
    });
    expect(posted.errors).toBeUndefined();
    const after = await hz(stream);
    expect(streamCalls()).toBe(2);
    expect(after.data?.channel.stream.nodes.map((n) => n.body)).toContain('posted through the cache test');
  });
});

describe('the answer cache within CACHE_MAX_BYTES', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await createTestApp({ env: { CACHE_MAX_AGE_MS: '600000', CACHE_MAX_BYTES: '65536' } });
  });
  afterAll(async () => {
    await small?.close();
  });

  it('pushes out the least recently used answers and never holds more than the bound', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => i + 1);
    for (const id of ids) await small.gql(`{ project(id: "${id}") { name } }`);
    const metrics = await (await fetch(new URL('/metrics', small.url))).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(metrics)?.[1]);
    expect(value('duograph_upstream_cache_evictions_total')).toBeGreaterThan(0);
    expect(value('duograph_upstream_cache_bytes')).toBeGreaterThan(0);
    expect(value('duograph_upstream_cache_bytes')).toBeLessThanOrEqual(65_536);
    // The most recent answer is still there; the first went out for room (asked another way: not the kept whole answer).
    small.resetCalls();
    await small.gql('{ project(id: "30") { id name } }');
    await small.gql('{ project(id: "1") { id name } }');
    expect(small.calls({ method: 'GET' }).map((c) => c.path)).toEqual(['/api/v4/projects/1']);
  });
});
