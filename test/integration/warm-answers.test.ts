/**
 * Warm answers: a query's whole answer kept per credential scope and served
 * again without running it, over real HTTP against the sandboxes, on a
 * clock the test moves. Each is served only while every stored upstream
 * answer it was built from would be (age, drops by webhook and mutation,
 * the caller's Cache-Control, a Hubzilla login's proof), in every HTTP
 * transport: POST, GET (with ETag and 304), trusted documents, and SSE.
 * The drop that reaches another instance through Redis is in
 * test/e2e/redis-cache.test.ts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { counter } from '../helpers/metrics.js';

const SECRET = 'warm-answers-webhook-secret-0123456789';
const DEMO_HUB = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const CORE = '{ project(fullPath: "platform/core") { name starCount } }';
const JOBS = 'query Jobs { project(id: "7") { jobs(first: 5) { nodes { restId status } } } }';
const DOCUMENT_ID = 'warm-core-stars';
type Stars = { project: { name: string; starCount: number } };
type Jobs = { project: { jobs: { nodes: { restId: number; status: string }[] } } };

let t: TestApp;
let clock = Date.UTC(2026, 0, 1);

const warm = (outcome: 'served' | 'kept' | 'stale') => counter(t.app, 'duograph_warm_answers_total', { outcome });
const lookups = () => counter(t.app, 'duograph_upstream_cache_lookups_total');

/** A GET of the GraphQL endpoint, as a browser or CDN sends it. */
function get(params: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const url = new URL(t.url);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  // GraphQL-Preflight: what CSRF prevention asks of a GET.
  return fetch(url, { headers: { accept: 'application/graphql-response+json', 'graphql-preflight': '1', 'private-token': 'demo-token', ...headers } });
}

const stars = () => t.gql<Stars>(CORE).then((answer) => answer.data?.project.starCount);

beforeAll(async () => {
  const documents = join(mkdtempSync(join(tmpdir(), 'duograph-warm-')), 'documents.json');
  writeFileSync(documents, JSON.stringify({ [DOCUMENT_ID]: 'query CoreStars { project(fullPath: "platform/core") { name starCount } }' }));
  t = await createTestApp({
    sandbox: { clock: 'manual' },
    env: {
      CACHE_MAX_AGE_MS: '5000',
      CACHE_WEBHOOK_MAX_AGE_MS: '60000',
      GITLAB_WEBHOOK_SECRET: SECRET,
      POLL_INTERVAL_MS: '600000',
      POLL_MAX_INTERVAL_MS: '600000',
      PERSISTED_DOCUMENTS: documents,
    },
    app: { now: () => clock },
  });
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  // Past every age: each test starts with nothing fresh, and alice has not starred platform/core.
  clock += 120_000;
  await t.gql('mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
  t.resetCalls();
  t.resetHubzillaCalls();
});

describe('warm answers', () => {
  it('serves a repeated query whole, reading nothing, until a mutation drops what it used, for every scope', async () => {
    const first = await stars();
    const [served, looked] = [await warm('served'), await lookups()];
    clock += 1_000;
    expect(await stars()).toBe(first);
    expect(await warm('served')).toBe(served + 1);
    // Not a single upstream read, stored or not: the operation did not run.
    expect(await lookups()).toBe(looked);
    // Another user stars the project through the gateway: the next answer is built again, with the new count.
    const star = await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    expect(star.errors).toBeUndefined();
    const stale = await warm('stale');
    const after = await stars();
    expect(await warm('stale')).toBe(stale + 1);
    expect(after).not.toBe(first);
    await t.gql('mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    expect(await stars()).toBe(first);
  });

  it('is built again once the oldest answer it used is past its age, and at once for a caller who asks for fresh data', async () => {
    await stars();
    clock += 4_999;
    const served = await warm('served');
    await stars();
    expect(await warm('served')).toBe(served + 1);
    expect(t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' })).toHaveLength(1);
    // Cache-Control of the caller: no-cache reads again; max-age=2 finds the answer too old.
    await t.gql(CORE, {}, { headers: { 'cache-control': 'no-cache' } });
    expect(t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' })).toHaveLength(2);
    clock += 3_000;
    await t.gql(CORE, {}, { headers: { 'cache-control': 'max-age=2' } });
    expect(t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' })).toHaveLength(3);
    clock += 5_000;
    await stars();
    expect(t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' })).toHaveLength(4);
    expect(await warm('served')).toBe(served + 1);
  });

  it('is built again the moment a webhook says a job it used changed', async () => {
    const register = await t.gql('mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }');
    expect(register.data).toEqual({ jobStatusWebhookRegister: { errors: [] } });
    // A new job that the sandbox will run, announcing each step by webhook.
    const retried = await t.gql('mutation { jobRetry(input: { id: "gid://duograph/Job/7/2001" }) { errors { message } } }');
    expect(retried.data).toEqual({ jobRetry: { errors: [] } });
    const before = await t.gql<Jobs>(JOBS);
    clock += 1_000;
    const served = await warm('served');
    expect((await t.gql<Jobs>(JOBS)).data).toEqual(before.data);
    expect(await warm('served')).toBe(served + 1);
    const jobReads = () => t.calls({ method: 'GET', path: /\/projects\/7\/jobs$/ }).length;
    const reads = jobReads();
    // The sandbox moves the new job on and posts its webhook to the gateway (a change made directly in the sandbox).
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    const after = await t.gql<Jobs>(JOBS);
    expect(jobReads()).toBe(reads + 1);
    expect(after.data).not.toEqual(before.data);
    expect(await warm('served')).toBe(served + 1);
  });

  it('reads a stored answer again for another operation from its parsed form, shared and left unchanged', async () => {
    const ids = '{ project(id: "7") { jobs(first: 5) { nodes { id restId } } } }';
    const first = await t.gql<Jobs>(JOBS);
    const hits = await lookups();
    // Another operation over the same page: a hit on the stored answer, whose parsed form the first read made.
    const again = await t.gql<{ project: { jobs: { nodes: { id: string; restId: number }[] } } }>(ids);
    expect(again.errors).toBeUndefined();
    expect(await lookups()).toBeGreaterThan(hits);
    expect(again.data?.project.jobs.nodes.map((job) => job.restId)).toEqual(first.data?.project.jobs.nodes.map((job) => job.restId));
    expect(again.data?.project.jobs.nodes[0]?.id).toMatch(/^gid:\/\/duograph\/Job\/7\/\d+$/);
    // And the first operation, asked another way (not its kept answer), reads the same parsed form once more.
    const third = await t.gql<Jobs>(JOBS.replace('query Jobs', 'query JobsAgain'));
    expect(third.data).toEqual(first.data);
    // One job, read whole (no fields picked from it): the gateway adds what it needs to a copy, not to the shared record.
    const job = '{ node(id: "gid://duograph/Job/7/2003") { ... on Job { restId status } } }';
    const one = await t.gql(job);
    expect(one.errors).toBeUndefined();
    for (const alias of ['a', 'b']) {
      const other = await t.gql(`{ ${alias}: node(id: "gid://duograph/Job/7/2003") { ... on Job { restId status } } }`);
      expect(other.errors).toBeUndefined();
      expect(other.data?.[alias]).toEqual(one.data?.node);
    }
  });

  it('never serves one scope what another was answered, nor keeps an answer with errors, a mutation or a report of reads', async () => {
    const secret = '{ project(fullPath: "alice/secret-notes") { name } }';
    for (let round = 0; round < 2; round++) {
      expect((await t.gql(secret, {}, { token: 'alice-token' })).data).toEqual({ project: { name: expect.any(String) } });
      expect((await t.gql(secret, {}, { token: 'demo-token' })).data).toEqual({ project: null });
      expect((await t.gql(secret, {}, { token: null })).data).toEqual({ project: null });
      // The same token in the query string is its own scope too.
      const url = new URL(t.url);
      url.searchParams.set('query', secret);
      url.searchParams.set('private_token', 'alice-token');
      const byQuery = (await (await fetch(url, { headers: { accept: 'application/json', 'graphql-preflight': '1' } })).json()) as { data: unknown };
      expect(byQuery.data).toEqual({ project: { name: expect.any(String) } });
    }
    const kept = await warm('kept');
    // An answer with an error: run again each time.
    const failing = '{ project(fullPath: "platform/core") { name } nope: project(id: "-1") { name } }';
    const a = await t.gql(failing);
    const b = await t.gql(failing);
    expect(a.errors?.length).toBeGreaterThan(0);
    expect(b.errors).toEqual(a.errors);
    // A report of how the reads were served asks for the reads.
    const report = { query: CORE, extensions: { upstreamCache: true } };
    for (let i = 0; i < 2; i++) {
      const response = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
        body: JSON.stringify(report),
      });
      expect(((await response.json()) as { extensions: { upstreamCache: unknown } }).extensions.upstreamCache).toBeDefined();
    }
    expect(await warm('kept')).toBe(kept);
  });

  it('gives GET answers an ETag and answers a matching If-None-Match with 304, until something the answer used changes', async () => {
    const first = await get({ query: CORE });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const body = await first.text();
    clock += 1_000;
    // A browser revalidating what it kept (fetch() would add no-cache to a conditional request of its own).
    const served = await warm('served');
    const again = await get({ query: CORE }, { 'if-none-match': etag ?? '', 'cache-control': 'max-age=60' });
    expect(await warm('served')).toBe(served + 1);
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toMatch(/^private, max-age=[34]$/);
    expect(again.headers.get('vary')).toMatch(/Private-Token/);
    // A weak validator compares alike; a list of validators too.
    expect((await get({ query: CORE }, { 'if-none-match': `"other", W/${etag}`, 'cache-control': 'max-age=60' })).status).toBe(304);
    // Asked for fresh data, the answer is built again: the same text, so still 304.
    const rebuilt = await get({ query: CORE }, { 'if-none-match': etag ?? '', 'cache-control': 'no-cache' });
    expect(rebuilt.status).toBe(304);
    expect(t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' })).toHaveLength(2);
    await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    const changed = await get({ query: CORE }, { 'if-none-match': etag ?? '' });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(await changed.text()).not.toBe(body);
    await t.gql('mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    // The same text again has the same validator, whether built or served warm.
    const back = await get({ query: CORE });
    expect(back.headers.get('etag')).toBe(etag);
    expect(await back.text()).toBe(body);
  });

  it('serves trusted documents warm by id, over GET and POST, and builds them again after a drop', async () => {
    const post = async () => {
      const response = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
        body: JSON.stringify({ documentId: DOCUMENT_ID }),
      });
      return ((await response.json()) as { data: Stars }).data.project.starCount;
    };
    const first = await post();
    const served = await warm('served');
    expect(await post()).toBe(first);
    const byGet = await get({ documentId: DOCUMENT_ID });
    expect(((await byGet.json()) as { data: Stars }).data.project.starCount).toBe(first);
    expect(await get({ documentId: DOCUMENT_ID })).toHaveProperty('status', 200);
    expect(await warm('served')).toBe(served + 2);
    await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    expect(await post()).toBe(first + 1);
    await t.gql('mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
  });

  it('serves a query over SSE warm as its one event, and builds it again after a drop', async () => {
    const client = createClient({ url: t.url.href, headers: { 'private-token': 'demo-token' }, retryAttempts: 0 });
    const once = async (): Promise<number> => {
      for await (const result of client.iterate<Stars>({ query: CORE })) return result.data?.project.starCount ?? -1;
      return -1;
    };
    try {
      const first = await once();
      const served = await warm('served');
      expect(await once()).toBe(first);
      expect(await warm('served')).toBe(served + 1);
      await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
      expect(await once()).toBe(first + 1);
      await t.gql('mutation { projectUnstar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    } finally {
      client.dispose();
    }
  });

  it("serves a Hubzilla answer warm only while the login's last verify is recent", async () => {
    const hz = (query: string) => t.gql(query, {}, { token: null, headers: { 'x-hubzilla-authorization': DEMO_HUB } });
    // The channel's own record verifies the login: what it reads next is kept for the channel it was verified as.
    expect((await hz('{ channel { name } }')).errors).toBeUndefined();
    const stream = '{ channel { stream(first: 5) { nodes { body } } } }';
    const first = await hz(stream);
    expect(first.errors).toBeUndefined();
    const served = await warm('served');
    clock += 1_000;
    expect((await hz(stream)).data).toEqual(first.data);
    expect(await warm('served')).toBe(served + 1);
    const verifies = () => t.hubzillaCalls({ path: /^verify/ }).length;
    const before = verifies();
    // Past the login's proof: the hub is asked about the login again before anything is served.
    clock += 10_000;
    expect((await hz(stream)).data).toEqual(first.data);
    expect(verifies()).toBe(before + 1);
    expect(await warm('served')).toBe(served + 1);
  });
});
