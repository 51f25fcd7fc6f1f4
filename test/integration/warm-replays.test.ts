/**
 * Replays: a request the same as one answered before from a kept answer
 * gets what was sent then (status, headers, bytes), with its own request id
 * and Cache-Control, without GraphQL handling it again; and only while that
 * answer stands for its caller. Over real HTTP against the sandboxes, on a
 * clock the test moves. warm-answers.test.ts covers the kept answers
 * themselves (every transport, every drop), which replays sit in front of.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { counter } from '../helpers/metrics.js';

const CORE = '{ project(fullPath: "platform/core") { name starCount } }';

let t: TestApp;
let clock = Date.UTC(2026, 0, 1);

const replays = () => counter(t.app, 'duograph_warm_replays_total');
const warm = (outcome: 'served' | 'renewed' | 'kept' | 'stale') => counter(t.app, 'duograph_warm_answers_total', { outcome });
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
  t = await createTestApp({
    sandbox: { clock: 'manual', extraTokens: 1 },
    env: { CACHE_MAX_AGE_MS: '5000', POLL_INTERVAL_MS: '600000', POLL_MAX_INTERVAL_MS: '600000' },
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
