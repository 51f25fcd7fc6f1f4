/**
 * Warm answers: a query's whole answer kept per credential scope and served
 * again without running it, over real HTTP against the sandboxes, on a
 * clock the test moves. Each is served only while every stored upstream
 * answer it was built from would be (age, drops by webhook and mutation,
 * the caller's Cache-Control, a Hubzilla login's proof), in every HTTP
 * transport: POST, GET (with ETag and 304), trusted documents, and SSE.
 * The drop that reaches another instance through Redis is in
 * test/e2e/redis-cache.test.ts. Replays: a request the same as one answered
 * before from a kept answer gets what was sent then (status, headers,
 * bytes), with its own request id and Cache-Control, without GraphQL
 * handling it again, and only while that answer stands for its caller.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { counter } from '../helpers/metrics.js';
import { gate } from '../helpers/shared-reads.js';

const SECRET = 'warm-answers-webhook-secret-0123456789';
const DEMO_HUB = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const CORE = '{ project(fullPath: "platform/core") { name starCount } }';
const JOBS = 'query Jobs { project(id: "7") { jobs(first: 5) { nodes { restId status } } } }';
const BOARD = 'query Board { projects(first: 5, search: "playground") { nodes { name jobs(first: 5) { nodes { restId status } } } } }';
const DOCUMENT_ID = 'warm-core-stars';
type Stars = { project: { name: string; starCount: number } };
type Jobs = { project: { jobs: { nodes: { restId: number; status: string }[] } } };

let t: TestApp;
let clock = Date.UTC(2026, 0, 1);

const warm = (outcome: 'served' | 'renewed' | 'shared' | 'patched' | 'kept' | 'stale') => counter(t.app, 'duograph_warm_answers_total', { outcome });
const lookups = () => counter(t.app, 'duograph_upstream_cache_lookups_total');

/** A GET of the GraphQL endpoint, as a browser or CDN sends it. */
function get(params: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  const url = new URL(t.url);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  // GraphQL-Preflight: what CSRF prevention asks of a GET.
  return fetch(url, { headers: { accept: 'application/graphql-response+json', 'graphql-preflight': '1', 'private-token': 'demo-token', ...headers } });
}

/** Registers the gateway's receiver on demo/playground and retries a job there: the sandbox runs the new job, announcing each step by webhook. */
async function startJobWithWebhooks(): Promise<void> {
  const register = await t.gql('mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }');
  expect(register.data).toEqual({ jobStatusWebhookRegister: { errors: [] } });
  const retried = await t.gql('mutation { jobRetry(input: { id: "gid://duograph/Job/7/2001" }) { errors { message } } }');
  expect(retried.data).toEqual({ jobRetry: { errors: [] } });
}

const stars = () => t.gql<Stars>(CORE).then((answer) => answer.data?.project.starCount);

const replays = () => counter(t.app, 'duograph_warm_replays_total');
const coreReads = () => t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' });

/** The GraphQL endpoint asked for CORE with demo's token: a POST, or a GET as a browser sends it. */
function ask(method: 'POST' | 'GET', headers: Record<string, string> = {}): Promise<Response> {
  const base = { accept: 'application/graphql-response+json', 'private-token': 'demo-token', ...headers };
  if (method === 'POST') return fetch(t.url, { method, headers: { 'content-type': 'application/json', ...base }, body: JSON.stringify({ query: CORE }) });
  const url = new URL(t.url);
  url.searchParams.set('query', CORE);
  // GraphQL-Preflight: what CSRF prevention asks of a GET.
  return fetch(url, { headers: { 'graphql-preflight': '1', ...base } });
}

/** A response's headers but those every response has of its own. */
function headersOf(response: Response, without: readonly string[] = []): Record<string, string> {
  const headers = Object.fromEntries(response.headers);
  for (const name of ['date', 'x-request-id', ...without]) delete headers[name];
  return headers;
}

beforeAll(async () => {
  const documents = join(mkdtempSync(join(tmpdir(), 'duograph-warm-')), 'documents.json');
  writeFileSync(documents, JSON.stringify({ [DOCUMENT_ID]: 'query CoreStars { project(fullPath: "platform/core") { name starCount } }' }));
  t = await createTestApp({
    sandbox: { clock: 'manual', extraTokens: 1 },
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

  it('reads again what it used once past its age, or at once for a caller who asks for fresh data, and stands while GitLab confirms it unchanged', async () => {
    const read = () => t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' });
    await stars();
    clock += 4_999;
    const [served, renewed, kept] = [await warm('served'), await warm('renewed'), await warm('kept')];
    await stars();
    expect(await warm('served')).toBe(served + 1);
    expect(read()).toHaveLength(1);
    // Cache-Control of the caller: no-cache asks GitLab again; max-age=2 finds what it used too old. Each is one
    // conditional read (GitLab's ETag), a 304, and the answer stands: the operation does not run.
    await t.gql(CORE, {}, { headers: { 'cache-control': 'no-cache' } });
    expect(read()).toHaveLength(2);
    expect(read()[1]?.headers['if-none-match']).toMatch(/^W\/"/);
    clock += 3_000;
    await t.gql(CORE, {}, { headers: { 'cache-control': 'max-age=2' } });
    expect(read()).toHaveLength(3);
    // Past the plain age (5 s) for every caller: read again once, still unchanged.
    clock += 5_000;
    await stars();
    expect(read()).toHaveLength(4);
    expect(await warm('renewed')).toBe(renewed + 3);
    expect(await warm('kept')).toBe(kept);
    expect(await warm('served')).toBe(served + 1);
    // Changed upstream meanwhile (a star given in GitLab itself, which no webhook announces): past the age, the
    // read again sees it, and the answer is built again with the new count.
    const before = await stars();
    const starred = await fetch(new URL('/api/v4/projects/platform%2Fcore/star', t.sandbox.url), {
      method: 'POST',
      headers: { 'private-token': 'alice-token' },
    });
    expect(starred.status).toBe(201);
    clock += 5_000;
    expect(await stars()).toBe((before ?? 0) + 1);
    expect(await warm('kept')).toBe(kept + 1);
  });

  it("serves another scope's text where this caller's own reads came back exactly as that one was built from, and never where they differ", async () => {
    await startJobWithWebhooks();
    // A list of projects (GitLab's simple form, the same for every user who sees them) and their jobs.
    const as = (token: string) => t.gql(BOARD, undefined, { token });
    // Two users, each with an answer of its own, built from reads of its own.
    const demo = await as('demo-token');
    const alice = await as('alice-token');
    expect(demo.errors).toBeUndefined();
    expect(alice.data).toEqual(demo.data);
    // A job of the project moves on: its webhook drops both users' job pages.
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    t.resetCalls();
    const [patched, shared] = [await warm('patched'), await warm('shared')];
    // demo's page read again changed, and nobody's text was built from it yet: its jobs are resolved again.
    const demoAfter = await as('demo-token');
    expect(demoAfter.data).not.toEqual(demo.data);
    expect(await warm('patched')).toBe(patched + 1);
    // alice's page, read again with her token, holds what demo's now does: demo's text is what her operation would
    // give, and is served without running it.
    const aliceAfter = await as('alice-token');
    expect(aliceAfter.data).toEqual(demoAfter.data);
    expect(await warm('shared')).toBe(shared + 1);
    expect(await warm('patched')).toBe(patched + 1);
    const jobReads = t.calls({ method: 'GET', path: /\/projects\/7\/jobs$/ });
    expect(jobReads.map((call) => call.headers['private-token'])).toEqual(['demo-token', 'alice-token']);
  });

  it("never serves another scope's text where any read of this caller's came back otherwise, even one that changes nothing shown", async () => {
    await startJobWithWebhooks();
    // The board and the project's full record: GitLab's full form holds the caller's own permissions.
    const board = BOARD.replace('query Board {', 'query BoardAndProject { project(fullPath: "demo/playground") { name }');
    const as = (token: string) => t.gql(board, undefined, { token });
    expect((await as('demo-token')).errors).toBeUndefined();
    await as('alice-token');
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    const [patched, shared] = [await warm('patched'), await warm('shared')];
    const demo = await as('demo-token');
    const alice = await as('alice-token');
    // The same data shown, and the same job page read; but alice's project record is not demo's: her own answer is
    // brought up to date (its jobs resolved again), not demo's served.
    expect(alice.data).toEqual(demo.data);
    expect(await warm('shared')).toBe(shared);
    expect(await warm('patched')).toBe(patched + 2);
  });

  it('is built again the moment a webhook says a job it used changed', async () => {
    await startJobWithWebhooks();
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

  it('judges the next request again when a webhook comes while a read for the one before is out', async () => {
    await startJobWithWebhooks();
    const before = await t.gql<Jobs>(JOBS);
    // The project's record (plain age, 5 s) is past its age; its jobs (webhook age) are not.
    clock += 5_000;
    const recordReads = () => t.calls({ method: 'GET', path: '/api/v4/projects/7' }).length;
    const reads = recordReads();
    const held = gate();
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/7', until: held.until, serve: true, times: 1 });
    const renewed = await warm('renewed');
    const pending = t.gql<Jobs>(JOBS);
    await vi.waitFor(() => expect(recordReads()).toBe(reads + 1), { timeout: 60_000 });
    // The job moves on while the record is out: its webhook drops the jobs the kept answer was built from.
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    held.open();
    // Judged as it came, before the webhook: the record unchanged, the answer stands.
    expect((await pending).data).toEqual(before.data);
    expect(await warm('renewed')).toBe(renewed + 1);
    // Not the next one: the drop is seen, the jobs are read again and the answer brought up to date.
    const jobReads = t.calls({ method: 'GET', path: /\/projects\/7\/jobs$/ }).length;
    const after = await t.gql<Jobs>(JOBS);
    expect(after.data).not.toEqual(before.data);
    expect(t.calls({ method: 'GET', path: /\/projects\/7\/jobs$/ })).toHaveLength(jobReads + 1);
  });

  it('judges again, and still serves, a job page whose webhook window ended within its plain age', async () => {
    await startJobWithWebhooks();
    await t.sandbox.flushDeliveries();
    // The project counts as webhook-fed for ten minutes after its last event: the answer is built just before that ends.
    clock += 599_000;
    expect((await t.gql<Jobs>(JOBS)).errors).toBeUndefined();
    clock += 500;
    const served = await warm('served');
    await t.gql<Jobs>(JOBS);
    expect(await warm('served')).toBe(served + 1);
    t.resetCalls();
    // The window is over: the page gets the plain age (5 s), which it still has, so it is served without a read.
    clock += 1_500;
    await t.gql<Jobs>(JOBS);
    expect(await warm('served')).toBe(served + 2);
    expect(t.calls({ method: 'GET' })).toEqual([]);
    // And read again once that is over too.
    clock += 4_000;
    await t.gql<Jobs>(JOBS);
    expect(t.calls({ method: 'GET', path: /\/projects\/7\/jobs$/ })).toHaveLength(1);
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

  it('sends a warm answer byte for byte as it was built, text past ASCII included, with its length, over GET and POST', async () => {
    const created = await t.gql<{ projectCreate: { project: { pathWithNamespace: string } | null } }>(
      'mutation { projectCreate(input: { name: "Ünïcödé 日本", path: "unicode-warm", description: "Ärger — naïve résumé 😀" }) { project { pathWithNamespace } } }',
    );
    const path = created.data?.projectCreate.project?.pathWithNamespace ?? '';
    expect(path).not.toBe('');
    const query = `{ project(fullPath: "${path}") { name description } }`;
    const post = () =>
      fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
        body: JSON.stringify({ query }),
      });
    const bytes = async (response: Response) => {
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get('content-length')).toBe(String(body.length));
      expect(response.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json; charset=utf-8$/);
      return body;
    };
    const built = await bytes(await post());
    expect(JSON.parse(built.toString('utf8'))).toEqual({ data: { project: { name: 'Ünïcödé 日本', description: 'Ärger — naïve résumé 😀' } } });
    const served = await warm('served');
    expect(await bytes(await post())).toEqual(built);
    const viaGet = await bytes(await get({ query }));
    expect(viaGet).toEqual(await bytes(await get({ query })));
    expect(JSON.parse(viaGet.toString('utf8'))).toEqual(JSON.parse(built.toString('utf8')));
    expect(await warm('served')).toBe(served + 2);
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

  it('runs the operation, and answers with its error, where GitLab refuses the caller it reads again for', async () => {
    const ask = () => t.gql<Stars>(CORE, undefined, { token: 'user-1-token' });
    expect((await ask()).data?.project.name).toBe('Core');
    const [renewed, stale] = [await warm('renewed'), await warm('stale')];
    // Past the age, with the token revoked in GitLab meanwhile: the read sent again is refused, so nothing is served warm.
    clock += 6_000;
    t.sandbox.revokeToken('user-1-token');
    t.resetCalls();
    const refused = await ask();
    expect(refused.data).toEqual({ project: null });
    expect(refused.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(t.calls({ method: 'GET', path: '/api/v4/projects/platform%2Fcore' })[0]?.headers['private-token']).toBe('user-1-token');
    expect(await warm('renewed')).toBe(renewed);
    expect(await warm('stale')).toBe(stale + 1);
    // Another caller's answer of the same operation stands.
    expect((await stars()) ?? 0).toBeGreaterThan(0);
  });
});

describe('patched answers', () => {
  // Aliases, a fragment, variables and a directive: the fields resolved again are every node of them, as first asked.
  const PATCHABLE = `query Patchable($first: Int!, $withStage: Boolean!) {
    projects(first: 5, search: "playground") {
      nodes { name ...Jobs recent: jobs(first: 2) { nodes { restId } } }
    }
  }
  fragment Jobs on Project { jobs(first: $first) { nodes { restId status stage @include(if: $withStage) } pageInfo { hasNextPage } } }`;
  const VARIABLES = { first: 4, withStage: true };
  let cacheControl: string | null = null;
  /** The answer's text as sent over GET (its Cache-Control in `cacheControl`). */
  const answer = (token: string, headers: Record<string, string> = {}) =>
    get({ query: PATCHABLE, variables: JSON.stringify(VARIABLES) }, { 'private-token': token, ...headers });
  const text = async (token: string, headers: Record<string, string> = {}) => {
    const response = await answer(token, headers);
    expect(response.status).toBe(200);
    cacheControl = response.headers.get('cache-control');
    return response.text();
  };
  const projectListReads = () => t.calls({ method: 'GET', path: /\/projects$/ }).length;
  const jobPageReads = () => t.calls({ method: 'GET', path: /\/projects\/7\/jobs$/ }).length;

  it('resolves again only the fields whose reads changed, and sends to the byte what running the operation gives', async () => {
    await startJobWithWebhooks();
    const before = await text('demo-token');
    expect(JSON.parse(before).errors).toBeUndefined();
    // A job of the project moves on: its webhook drops the two job pages (4 jobs, and 2) the answer was built from.
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    t.resetCalls();
    clock += 2_000;
    const [patched, kept] = [await warm('patched'), await warm('kept')];
    const after = await text('demo-token');
    expect(await warm('patched')).toBe(patched + 1);
    expect(await warm('kept')).toBe(kept);
    expect(after).not.toBe(before);
    // The pages were read now, the project list 2 s ago: a browser may keep the answer for what the list has left.
    expect(cacheControl).toBe('private, max-age=3');
    // Each changed page read once, again, with demo's token; the project list not at all (it did not change).
    expect(jobPageReads()).toBe(2);
    expect(projectListReads()).toBe(0);
    // alice's first answer runs the whole operation from her own reads: the same text, byte for byte.
    const whole = await text('alice-token');
    expect(await warm('kept')).toBe(kept + 1);
    expect(whole).toBe(after);
    // The patched answer is kept as any other: served again as it is.
    const served = await warm('served');
    expect(await text('demo-token')).toBe(after);
    expect(await warm('served')).toBe(served + 1);
  });

  it('runs the operation whole where the field cannot be resolved again, and answers with what that run gives', async () => {
    await startJobWithWebhooks();
    expect(JSON.parse(await text('demo-token')).errors).toBeUndefined();
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    // Asked fresh (no-cache), every read goes to GitLab: the two job pages read again come back changed, and GitLab
    // then fails every read of them, the patch's own first.
    const jobs = /\/projects\/7\/jobs$/;
    t.sandbox.addFault({ method: 'GET', path: jobs, times: 2 });
    t.sandbox.addFault({ method: 'GET', path: jobs, status: 500 });
    const [patched, kept, stale] = [await warm('patched'), await warm('kept'), await warm('stale')];
    t.resetCalls();
    const failed = (await (await answer('demo-token', { 'cache-control': 'no-cache' })).json()) as { errors?: { extensions: { code: string } }[] };
    expect(failed.errors?.[0]?.extensions.code).toBe('UPSTREAM_ERROR');
    // The two pages read again, the patch's one failed read, then the whole run's two.
    expect(t.calls({ method: 'GET', path: jobs }).length).toBe(5);
    expect(await warm('stale')).toBe(stale + 1);
    expect(await warm('patched')).toBe(patched);
    expect(await warm('kept')).toBe(kept);
    // GitLab answers again: the answer kept before is brought up to date, the same text alice's first run gives.
    t.sandbox.clearFaults();
    const after = await text('demo-token', { 'cache-control': 'no-cache' });
    expect(await warm('patched')).toBe(patched + 1);
    expect(await text('alice-token')).toBe(after);
  });

  it('runs the operation whole where a read no such field made changed (the project list)', async () => {
    await startJobWithWebhooks();
    expect(JSON.parse(await text('demo-token')).errors).toBeUndefined();
    // A new project in the list: a write through the gateway drops the lists its creator read.
    const created = await t.gql('mutation { projectCreate(input: { name: "playground-patch-check" }) { errors { message } } }');
    expect(created.errors).toBeUndefined();
    const [patched, kept] = [await warm('patched'), await warm('kept')];
    const after = JSON.parse(await text('demo-token')) as { data: { projects: { nodes: { name: string }[] } } };
    expect(after.data.projects.nodes.map((project) => project.name)).toContain('playground-patch-check');
    expect(await warm('patched')).toBe(patched);
    expect(await warm('kept')).toBe(kept + 1);
  });
});

describe('warm answers in a small room', () => {
  let small: TestApp;
  const FIELDS = 'name nameWithNamespace pathWithNamespace sshUrlToRepo httpUrlToRepo webUrl createdAt lastActivityAt starCount';
  // Two answers whose texts do not both fit in the room kept for texts (half the warm answers' three sixteenths of CACHE_MAX_BYTES: 12 KiB), from one read.
  const wide = (prefix: string) => `{ ${Array.from({ length: 30 }, (_, i) => `${prefix}${i}: project(fullPath: "platform/core") { ${FIELDS} }`).join(' ')} }`;
  const keptOf = (outcome: 'served' | 'stale' | 'kept') => counter(small.app, 'duograph_warm_answers_total', { outcome });

  beforeAll(async () => {
    small = await createTestApp({ sandbox: { clock: 'manual' }, env: { CACHE_MAX_AGE_MS: '5000', CACHE_MAX_BYTES: '131072' }, app: { now: () => clock } });
  });
  afterAll(async () => {
    await small?.close();
  });

  it('builds an answer whose text was pushed out for room again, without first reading its sources again', async () => {
    const [a, b] = [wide('a'), wide('b')];
    const first = await small.gql(a);
    expect(first.errors).toBeUndefined();
    // About 11,000 bytes: more than half the room.
    expect(Buffer.byteLength(JSON.stringify(first.data))).toBeGreaterThan(8_500);
    const [served, kept] = [await keptOf('served'), await keptOf('kept')];
    expect((await small.gql(a)).data).toEqual(first.data);
    expect(await keptOf('served')).toBe(served + 1);
    // B's text takes the room A's held.
    expect((await small.gql(b)).errors).toBeUndefined();
    expect(await keptOf('kept')).toBe(kept + 1);
    // Past the age: A's answer is still known, its text is not. It runs once, with one lookup of its one read (no read sent again first).
    clock += 6_000;
    const [stale, looked] = [await keptOf('stale'), await counter(small.app, 'duograph_upstream_cache_lookups_total')];
    expect((await small.gql(a)).data).toEqual(first.data);
    expect(await keptOf('stale')).toBe(stale + 1);
    expect(await counter(small.app, 'duograph_upstream_cache_lookups_total')).toBe(looked + 1);
    expect(await keptOf('kept')).toBe(kept + 2);
  });
});

describe('warm replays', () => {
  it('sends a repeated POST the status, headers and bytes its first answer had, with its own request id, reading nothing', async () => {
    const first = await ask('POST', { 'x-request-id': 'replay-first', origin: 'https://app.example' });
    const firstBody = await first.text();
    expect(first.status).toBe(200);
    expect(JSON.parse(firstBody).data.project.name).toBe('Core');
    const before = await replays();
    clock += 1_000;
    const again = await ask('POST', { 'x-request-id': 'replay-again', origin: 'https://app.example' });
    expect(await replays()).toBe(before + 1);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstBody);
    expect(headersOf(again)).toEqual(headersOf(first));
    // Yoga's own headers (its CORS answer to the Origin, the content type it chose) and the gateway's.
    expect(again.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(again.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(again.headers.get('content-length')).toBe(String(Buffer.byteLength(firstBody)));
    // Each request's own id, not the one it was first answered with.
    expect(again.headers.get('x-request-id')).toBe('replay-again');
    expect(coreReads()).toHaveLength(1);
  });

  it("works out a GET's Cache-Control again, and replays a 304 only while If-None-Match names the text it has", async () => {
    const first = await ask('GET');
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    const before = await replays();
    // Two seconds on: the same answer, which a browser may keep three more (what its read has left of the plain age).
    clock += 2_000;
    const again = await ask('GET');
    expect(await replays()).toBe(before + 1);
    expect(again.headers.get('cache-control')).toBe('private, max-age=3');
    expect(again.headers.get('etag')).toBe(etag);
    expect(headersOf(again, ['cache-control'])).toEqual(headersOf(first, ['cache-control']));
    // The browser revalidates: answered 304 through GraphQL the first time, replayed after.
    const revalidated = await ask('GET', { 'if-none-match': etag });
    expect(revalidated.status).toBe(304);
    expect(await replays()).toBe(before + 1);
    const revalidatedAgain = await ask('GET', { 'if-none-match': etag });
    expect(revalidatedAgain.status).toBe(304);
    expect(await revalidatedAgain.text()).toBe('');
    expect(await replays()).toBe(before + 2);
    expect(headersOf(revalidatedAgain)).toEqual(headersOf(revalidated));
    // A star given through the gateway drops what it was built from: the text changed, so the same If-None-Match now
    // gets the new answer whole, through GraphQL.
    await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    const changed = await ask('GET', { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(await replays()).toBe(before + 2);
  });

  it('is never replayed once a mutation dropped what it was built from, and is again once built anew', async () => {
    const first = (await (await ask('POST')).json()) as { data: { project: { starCount: number } } };
    await ask('POST');
    const [before, stale] = [await replays(), await warm('stale')];
    await t.gql('mutation { projectStar(input: { id: "platform/core" }) { changed } }', {}, { token: 'alice-token' });
    const after = (await (await ask('POST')).json()) as typeof first;
    expect(after.data.project.starCount).toBe(first.data.project.starCount + 1);
    expect(await replays()).toBe(before);
    expect(await warm('stale')).toBe(stale + 1);
    const again = (await (await ask('POST')).json()) as typeof first;
    expect(again).toEqual(after);
    expect(await replays()).toBe(before + 1);
  });

  it('reads again, with the caller’s own token, what is past its age or what the caller asks fresh, and replays it only where GitLab confirms it', async () => {
    await ask('POST');
    await ask('POST', { 'cache-control': 'no-cache' });
    t.resetCalls();
    const [before, renewed] = [await replays(), await warm('renewed')];
    // no-cache: GitLab is asked every time (a conditional read, a 304), and the answer stands.
    const fresh = await ask('POST', { 'cache-control': 'no-cache' });
    expect(fresh.status).toBe(200);
    expect(coreReads()).toHaveLength(1);
    expect(coreReads()[0]?.headers['private-token']).toBe('demo-token');
    expect(coreReads()[0]?.headers['if-none-match']).toMatch(/^W\/"/);
    expect(await replays()).toBe(before + 1);
    expect(await warm('renewed')).toBe(renewed + 1);
    // Changed in GitLab itself (no webhook, no drop): past the plain age, the read again sees it, and the answer is
    // built again through GraphQL with the new count, not replayed.
    const starred = await fetch(new URL('/api/v4/projects/platform%2Fcore/star', t.sandbox.url), {
      method: 'POST',
      headers: { 'private-token': 'alice-token' },
    });
    expect(starred.status).toBe(201);
    clock += 5_000;
    const stars = (response: Response) => response.json().then((body: { data: { project: { starCount: number } } }) => body.data.project.starCount);
    const changed = await stars(await ask('POST'));
    expect(await replays()).toBe(before + 1);
    expect(coreReads()).toHaveLength(2);
    // Read once: what the replay found was handed on, not read again.
    expect(await stars(await ask('POST'))).toBe(changed);
    expect(await replays()).toBe(before + 2);
  });

  it('answers with the upstream error where GitLab fails the read a replay needs, and replays again once GitLab confirms the answer', async () => {
    const first = await (await ask('POST')).text();
    clock += 5_000;
    // Past the plain age: the replay reads again with the caller's token, GitLab fails it (and the run's own read).
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/platform%2Fcore', status: 500 });
    t.resetCalls();
    const [before, stale] = [await replays(), await warm('stale')];
    const failed = await ask('POST');
    expect(failed.status).toBe(200);
    const body = (await failed.json()) as { data: { project: null }; errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]?.extensions.code).toBe('UPSTREAM_ERROR');
    expect(body.data.project).toBeNull();
    expect(await replays()).toBe(before);
    expect(await warm('stale')).toBe(stale + 1);
    // The replay's read, then the operation's own: nothing replayed from before the failure.
    expect(coreReads()).toHaveLength(2);
    t.sandbox.clearFaults();
    t.resetCalls();
    // GitLab answers again, unchanged (a 304 to the read again): the answer kept before the failure stands, replayed.
    expect(await (await ask('POST')).text()).toBe(first);
    expect(await (await ask('POST')).text()).toBe(first);
    expect(await replays()).toBe(before + 2);
    expect(coreReads()).toHaveLength(1);
  });

  it('never replays one caller’s answer to another, nor to a request that differs in anything that can change it', async () => {
    await ask('POST');
    await ask('POST');
    const before = await replays();
    // Another token: its own answer, through GraphQL.
    const alice = await ask('POST', { 'private-token': 'alice-token' });
    expect(alice.status).toBe(200);
    // Another Accept: another content type.
    const json = await ask('POST', { accept: 'application/json' });
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // A header no part of the gateway reads, and the same body with other whitespace: each answered through GraphQL once.
    await ask('POST', { 'x-client': 'dashboard' });
    const spaced = await fetch(t.url, {
      method: 'POST',
      headers: { accept: 'application/graphql-response+json', 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: CORE }, null, 1),
    });
    expect(spaced.status).toBe(200);
    expect(await replays()).toBe(before);
  });
});
