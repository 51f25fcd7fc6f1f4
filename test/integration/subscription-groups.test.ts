/**
 * WebSocket subscribers sharing one execution per credentials and operation
 * (operation groups) and one topic per watch: late joiners, leavers, access
 * checks per joiner, credentials kept apart, SSE beside WebSocket, and the
 * graphql-transport-ws protocol's edges, over real sockets against the sandbox.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from '../helpers/app.js';

const SECRET = 'test-webhook-secret-0123456789';
const fixture = JSON.parse(readFileSync(new URL('../fixtures/gitlab-webhooks/job_event.payload.json', import.meta.url), 'utf8')) as Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: results are read by path, as a client reads JSON.
type Result = { data?: any; errors?: any[] };

class Reader {
  private pending: Promise<IteratorResult<unknown>> | null = null;
  constructor(private readonly it: AsyncIterableIterator<unknown>) {}
  async next(ms = 3000): Promise<Result> {
    let timer: NodeJS.Timeout | undefined;
    try {
      this.pending ??= this.it.next();
      const r = await Promise.race([this.pending, new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`no result in ${ms} ms`)), ms)))]);
      this.pending = null;
      return r.done ? { errors: [{ message: 'completed' }] } : (r.value as Result);
    } finally {
      clearTimeout(timer);
    }
  }
  async none(ms = 300): Promise<void> {
    await assert.rejects(this.next(ms), /no result/);
  }
  stop() {
    return this.it.return?.();
  }
}

const ws = (t: TestApp, token = 'demo-token'): Client =>
  createClient({
    url: t.url.href.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { 'Private-Token': token },
    retryAttempts: 0,
    lazy: true,
  });
const sub = (c: Client, query: string, variables?: Record<string, unknown>) => new Reader(c.iterate({ query, variables }));
const watchJob = 'subscription ($p: ID!, $j: ID) { jobStatusUpdated(projectId: $p, jobId: $j) { restId status finishedAt } }';
const st = (r: Result) => `${r.data?.jobStatusUpdated?.restId}:${r.data?.jobStatusUpdated?.status}`;

async function hook(t: TestApp, over: Record<string, unknown>) {
  const response = await fetch(new URL('/webhooks/gitlab', t.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Job Hook' },
    body: JSON.stringify({ ...fixture, ...over }),
  });
  assert.equal(response.status, 200, await response.text());
}

async function waitFor(check: () => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let t: TestApp;
const groups = () => (t.app.websocket as unknown as { groups: number }).groups;

beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' }, env: { GITLAB_WEBHOOK_SECRET: SECRET, POLL_INTERVAL_MS: '60000', UPSTREAM_RETRIES: '0' } });
});

afterAll(async () => {
  await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
  await t.close();
});

describe('subscription groups', () => {
  it('a late joiner gets the current state (after a change), then later changes; an early member gets only the change', async () => {
    const a = ws(t),
      b = ws(t);
    const first = sub(a, watchJob, { p: '7', j: '2004' });
    assert.equal(st(await first.next()), '2004:CREATED');
    await hook(t, { project_id: 7, build_id: 2004, pipeline_id: 202, build_status: 'running', build_started_at: '2024-04-01T13:00:00Z' });
    assert.equal(st(await first.next()), '2004:RUNNING');
    const late = sub(b, watchJob, { p: '7', j: '2004' });
    // The sandbox still says created: the topic knows running, newer; the joiner gets running.
    assert.equal(st(await late.next()), '2004:RUNNING');
    assert.equal(groups(), 1, 'one group');
    await first.none();
    await hook(t, {
      project_id: 7,
      build_id: 2004,
      pipeline_id: 202,
      build_status: 'success',
      build_started_at: '2024-04-01T13:00:00Z',
      build_finished_at: '2024-04-01T13:01:00Z',
    });
    assert.equal(st(await first.next()), '2004:SUCCESS');
    assert.equal(st(await late.next()), '2004:SUCCESS');
    assert.deepEqual(t.app.hub.stats().streams, 2);
    // (d) one leaves, the other keeps getting events
    await first.stop();
    await waitFor(() => t.app.hub.stats().streams === 1);
    await hook(t, {
      project_id: 7,
      build_id: 2004,
      pipeline_id: 202,
      build_status: 'failed',
      build_started_at: '2024-04-01T13:00:00Z',
      build_finished_at: '2024-04-01T13:02:00Z',
    });
    assert.equal(st(await late.next()), '2004:FAILED');
    await late.stop();
    await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
    await a.dispose();
    await b.dispose();
  });

  it('different credentials: different groups, each gets only what it may see', async () => {
    const demo = ws(t, 'demo-token'),
      bob = ws(t, 'bob-token'),
      nobody = ws(t, 'wrong-token');
    const q = watchJob;
    const d = sub(demo, q, { p: '6', j: '4001' });
    const b = sub(bob, q, { p: '6', j: '4001' });
    const n = sub(nobody, q, { p: '6', j: '4001' });
    const [rd, rb, rn] = await Promise.all([d.next(), b.next(), n.next()]);
    assert.equal(st(rb), '4001:SUCCESS');
    assert.equal(st(rd), '4001:SUCCESS');
    // demo and bob may both see the job, but with other credentials they run apart; the refused one ran no group.
    assert.equal(groups(), 2);
    assert.equal(rn.errors?.[0]?.extensions?.code, 'UNAUTHENTICATED');
    await hook(t, { project_id: 6, build_id: 4001, pipeline_id: 401, build_status: 'canceled' });
    assert.equal(st(await b.next()), '4001:CANCELED');
    assert.equal(st(await d.next()), '4001:CANCELED');
    await b.stop();
    await d.stop();
    await Promise.all([demo.dispose(), bob.dispose(), nobody.dispose()]);
    await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
  });

  it('a joiner whose access check fails gets the error; the members already there keep going', async () => {
    const a = ws(t),
      b = ws(t);
    const first = sub(a, watchJob, { p: '7', j: '2003' });
    assert.equal(st(await first.next()), '2003:RUNNING');
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/7/jobs/2003', status: 502, times: 1 });
    const late = sub(b, watchJob, { p: '7', j: '2003' });
    const failed = await late.next();
    assert.equal(failed.errors?.[0]?.extensions?.code, 'UPSTREAM_ERROR', JSON.stringify(failed));
    assert.deepEqual(failed.errors?.[0]?.path, ['jobStatusUpdated']);
    assert.equal((await late.next()).errors?.[0]?.message, 'completed');
    t.sandbox.clearFaults();
    await hook(t, { project_id: 7, build_id: 2003, pipeline_id: 202, build_status: 'failed', build_finished_at: '2024-04-01T13:05:00Z' });
    assert.equal(st(await first.next()), '2003:FAILED');
    await first.stop();
    await Promise.all([a.dispose(), b.dispose()]);
    await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
  });

  it('two ids on one connection, same operation: completing one leaves the other', async () => {
    const a = ws(t);
    const x = sub(a, watchJob, { p: '7', j: '2005' });
    const y = sub(a, watchJob, { p: '7', j: '2005' });
    assert.equal(st(await x.next()), '2005:CREATED');
    assert.equal(st(await y.next()), '2005:CREATED');
    await x.stop();
    await hook(t, { project_id: 7, build_id: 2005, pipeline_id: 202, build_status: 'pending' });
    assert.equal(st(await y.next()), '2005:PENDING');
    await y.stop();
    await a.dispose();
    await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
  });

  it('pipeline watch with a statuses filter: a joiner sees only matching jobs', async () => {
    const a = ws(t),
      b = ws(t);
    const q = 'subscription { jobStatusUpdated(projectId: "7", pipelineId: "202", statuses: [CREATED]) { restId status } }';
    const first = sub(a, q);
    const got = [st(await first.next()), st(await first.next())];
    const late = sub(b, q);
    const gotLate = [st(await late.next()), st(await late.next())];
    assert.deepEqual(got, gotLate);
    await first.none(200);
    await late.none(200);
    await first.stop();
    await late.stop();
    await Promise.all([a.dispose(), b.dispose()]);
    await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
  });

  it('queries and errors over the socket', async () => {
    const a = ws(t);
    const q = await new Reader(a.iterate({ query: '{ project(id: "7") { name } }' })).next();
    assert.ok(q.data?.project?.name, JSON.stringify(q));
    await assert.rejects(new Reader(a.iterate({ query: '{ nope }' })).next(), (e: unknown) => Array.isArray(e) && /nope/.test(JSON.stringify(e)));
    await assert.rejects(new Reader(a.iterate({ query: '{ project(' })).next(), (e: unknown) => Array.isArray(e) && /Syntax/.test(JSON.stringify(e)));
    await a.dispose();
  });

  it('protocol edges with a raw socket', async () => {
    const url = t.url.href.replace(/^http/, 'ws');
    const open = (protocol = 'graphql-transport-ws') =>
      new Promise<{ socket: WebSocket; messages: unknown[]; closed: Promise<number> }>((resolve) => {
        const socket = new WebSocket(url, protocol);
        const messages: unknown[] = [];
        const closed = new Promise<number>((r) => socket.on('close', (code) => r(code)));
        socket.on('message', (d) => messages.push(JSON.parse(String(d))));
        socket.on('open', () => resolve({ socket, messages, closed }));
      });
    let c = await open();
    c.socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ __typename }' } }));
    assert.equal(await c.closed, 4401);
    c = await open();
    c.socket.send('not json');
    assert.equal(await c.closed, 4400);
    await new Promise<void>((resolve) => {
      const other = new WebSocket(url, 'graphql-ws');
      other.on('error', (e) => {
        assert.match(String(e), /no subprotocol/);
        resolve();
      });
    });
    c = await open();
    c.socket.send(JSON.stringify({ type: 'connection_init', payload: { 'Private-Token': 'demo-token' } }));
    await waitFor(() => c.messages.length === 1);
    assert.deepEqual(c.messages[0], { type: 'connection_ack' });
    c.socket.send(JSON.stringify({ type: 'ping', payload: { x: 1 } }));
    await waitFor(() => c.messages.length === 2);
    assert.deepEqual(c.messages[1], { type: 'pong', payload: { x: 1 } });
    c.socket.send(JSON.stringify({ type: 'connection_init' }));
    assert.equal(await c.closed, 4429);
    c = await open();
    c.socket.send(JSON.stringify({ type: 'connection_init', payload: { 'Private-Token': 'demo-token' } }));
    await waitFor(() => c.messages.length === 1);
    const s = JSON.stringify({ id: 'a', type: 'subscribe', payload: { query: watchJob, variables: { p: '7', j: '2001' } } });
    c.socket.send(s);
    c.socket.send(s);
    assert.equal(await c.closed, 4409);
    c = await open();
    assert.equal(await c.closed, 4408);
  });

  it('a fork import: two members of a group follow a fork; a joiner after a step gets the current status; all complete', async () => {
    const { STEP_MS } = await import('../../src/sandbox/gitlab/server.js');
    const fork = await t.gql<Result['data']>(
      'mutation { projectFork(input: { id: "platform/core", namespacePath: "demo", path: "core-v", name: "Core V" }) { project { id } errors { message } } }',
    );
    const id = fork.data?.projectFork.project.id;
    const q = 'subscription ($p: ID!) { projectImportStatusUpdated(projectId: $p) { importStatus } }';
    const a = ws(t),
      b = ws(t);
    const x = sub(a, q, { p: id });
    const s = (r: Result) => r.data?.projectImportStatusUpdated?.importStatus;
    assert.equal(s(await x.next()), 'scheduled');
    t.sandbox.advance(STEP_MS);
    // the poller is at 60 s: the joiner's read finds "started", newer; both get it
    const y = sub(b, q, { p: id });
    assert.equal(s(await y.next()), 'started');
    assert.equal(s(await x.next()), 'started');
    t.sandbox.advance(STEP_MS);
    const z = sub(ws(t), q, { p: id });
    assert.equal(s(await z.next()), 'finished');
    assert.equal(s(await x.next()), 'finished');
    assert.equal(s(await y.next()), 'finished');
    for (const r of [x, y, z]) assert.equal((await r.next()).errors?.[0]?.message, 'completed');
    await Promise.all([a.dispose(), b.dispose()]);
  });

  it('SSE and WebSocket subscribers of the same watch share the topic', async () => {
    const { createClient: sse } = await import('graphql-sse');
    const s = new Reader(
      sse({ url: t.url.href, headers: { 'private-token': 'demo-token' }, retryAttempts: 0, singleConnection: false }).iterate({
        query: watchJob,
        variables: { p: '7', j: '2002' },
      }),
    );
    const a = ws(t);
    const w = sub(a, watchJob, { p: '7', j: '2002' });
    assert.equal(st(await s.next()), '2002:SUCCESS');
    assert.equal(st(await w.next()), '2002:SUCCESS');
    t.resetCalls();
    await hook(t, { project_id: 7, build_id: 2002, pipeline_id: 201, build_status: 'failed', build_finished_at: '2024-04-01T14:05:00Z' });
    assert.equal(st(await s.next()), '2002:FAILED');
    assert.equal(st(await w.next()), '2002:FAILED');
    assert.equal(t.calls({ path: '/api/v4/projects/7/jobs/2002' }).length, 1, 'one read for both');
    await s.stop();
    await w.stop();
    await a.dispose();
  });

  it('a client that goes away while its group starts', async () => {
    t.sandbox.setLatency(200);
    const a = ws(t),
      b = ws(t);
    const it1 = a.iterate({ query: watchJob, variables: { p: '7', j: '2001' } });
    const it2 = b.iterate({ query: watchJob, variables: { p: '7', j: '2001' } });
    const p1 = it1.next(),
      p2 = it2.next();
    await waitFor(() => t.app.hub.stats().streams >= 1);
    await a.dispose();
    const r2 = (await p2).value as Result;
    assert.equal(st(r2), '2001:SUCCESS');
    await p1.catch(() => undefined);
    t.sandbox.setLatency(0);
    await b.dispose();
    await waitFor(() => t.app.hub.stats().streams === 0 && groups() === 0);
  });
});
