/**
 * Subscriptions end to end: the gateway in-process in front of a sandbox
 * GitLab on a manual clock, real graphql-ws and graphql-sse clients, the
 * sandbox delivering webhooks to the gateway's receiver, shared pollers.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';
import { DEMO_LOG_RUN_MS } from '../../src/sandbox/gitlab/ci-seed.js';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectAllReleased, postWebhook, type Result, SECRET, sseSubscribe, wsClient, wsSubscribe } from '../helpers/subscriptions.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/gitlab-webhooks/${name}`, import.meta.url), 'utf8');

const JOB_FIELDS = 'restId name status pipeline { restId } finishedAt';
const watchJob = `subscription ($projectId: ID!, $jobId: ID) { jobStatusUpdated(projectId: $projectId, jobId: $jobId) { ${JOB_FIELDS} } }`;
const watchPipeline = `subscription ($projectId: ID!, $pipelineId: ID, $statuses: [JobStatus!]) { jobStatusUpdated(projectId: $projectId, pipelineId: $pipelineId, statuses: $statuses) { ${JOB_FIELDS} } }`;

const job = (r: Result) => r.data?.jobStatusUpdated as { restId: number; name: string; status: string; finishedAt: string | null } | undefined;
const statusOf = (r: Result) => `${job(r)?.restId}:${job(r)?.status}`;

describe('jobStatusUpdated from the shared poller', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', GITLAB_WEBHOOK_SECRET: SECRET } });
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('emits the job now, then its change, over graphql-ws', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, watchJob, { projectId: '1', jobId: '1013' });
    expect(statusOf(await sub.next())).toBe('1013:RUNNING');
    t.sandbox.advance(STEP_MS);
    const next = await sub.next();
    expect(statusOf(next)).toBe('1013:SUCCESS');
    expect(job(next)?.finishedAt).toBe(new Date(t.sandbox.now()).toISOString());
    await sub.stop();
    await client.dispose();
  });

  it("emits the pipeline's jobs now, then every change, over SSE", async () => {
    const sub = sseSubscribe(t, watchPipeline, { projectId: 'gid://duograph/Project/7', pipelineId: '202' });
    expect((await sub.take(3)).map(statusOf)).toEqual(['2003:RUNNING', '2004:CREATED', '2005:CREATED']);
    t.sandbox.advance(STEP_MS);
    expect((await sub.take(3)).map(statusOf)).toEqual(['2003:FAILED', '2004:SKIPPED', '2005:SKIPPED']);
    await sub.stop();
  });

  it('sends only the newest of the current state with initialLimit, and none with 0', async () => {
    const limited = `subscription ($limit: Int) { jobStatusUpdated(projectId: "7", pipelineId: "202", initialLimit: $limit) { ${JOB_FIELDS} } }`;
    const newest = sseSubscribe(t, limited, { limit: 1 });
    expect(statusOf(await newest.next())).toBe('2005:CREATED');
    const client = wsClient(t, { 'private-token': 'bob-token' });
    const changesOnly = wsSubscribe(client, limited, { limit: 0 });
    // Both joined once each credential's poller runs: nothing else is sent before a change.
    await vi.waitFor(() => expect(t.app.hub.stats()).toMatchObject({ pollers: 2 }));
    t.sandbox.advance(STEP_MS);
    const changes = ['2003:FAILED', '2004:SKIPPED', '2005:SKIPPED'];
    expect((await newest.take(3)).map(statusOf)).toEqual(changes);
    expect((await changesOnly.take(3)).map(statusOf)).toEqual(changes);
    await newest.stop();
    await changesOnly.stop();
    await client.dispose();
  });

  it.each([-1, 101])('refuses initialLimit %i with BAD_USER_INPUT before any upstream call', async (limit) => {
    t.resetCalls();
    const sub = sseSubscribe(t, 'subscription ($limit: Int) { jobStatusUpdated(projectId: "7", initialLimit: $limit) { restId } }', { limit });
    const result = await sub.next();
    expect(result.errors?.[0]).toMatchObject({ message: 'initialLimit must be between 0 and 100.', extensions: { code: 'BAD_USER_INPUT' } });
    expect(t.calls()).toHaveLength(0);
    await sub.stop();
  });

  it('shows what jobPlay, jobCancel and jobRetry do', async () => {
    const client = wsClient(t, { 'private-token': 'alice-token' });
    const sub = wsSubscribe(client, watchPipeline, { projectId: '1', pipelineId: '101', statuses: ['PENDING', 'CANCELED'] });
    const play = await t.gql<{ jobPlay: { job: { restId: number } } }>(
      'mutation { jobPlay(input: { id: "gid://duograph/Job/1/1005" }) { job { restId status } errors { message } } }',
      {},
      { token: 'alice-token' },
    );
    expect(play.data?.jobPlay.job.restId).toBe(1005);
    expect(statusOf(await sub.next())).toBe('1005:PENDING');
    await t.gql('mutation { jobCancel(input: { id: "gid://duograph/Job/1/1005" }) { job { status } } }', {}, { token: 'alice-token' });
    expect(statusOf(await sub.next())).toBe('1005:CANCELED');
    const retry = await t.gql<{ jobRetry: { job: { restId: number } } }>(
      'mutation { jobRetry(input: { id: "gid://duograph/Job/1/1005" }) { job { restId } } }',
      {},
      { token: 'alice-token' },
    );
    const retried = retry.data?.jobRetry.job.restId;
    expect(retried).toBeGreaterThan(4002);
    expect(statusOf(await sub.next())).toBe(`${retried}:PENDING`);
    await sub.stop();
    await client.dispose();
  });

  it('runs one poller per project and credentials, however many subscribe', async () => {
    const client = wsClient(t);
    const subs = Array.from({ length: 20 }, () => wsSubscribe(client, watchJob, { projectId: '7', jobId: '2001' }));
    for (const sub of subs) expect(statusOf(await sub.next())).toBe('2001:SUCCESS');
    expect(t.app.hub.stats()).toMatchObject({ pollers: 1, streams: 20 });
    const alice = wsClient(t, { 'private-token': 'bob-token' });
    const other = wsSubscribe(alice, watchJob, { projectId: '7', jobId: '2001' });
    await other.next();
    expect(t.app.hub.stats()).toMatchObject({ pollers: 2, streams: 21 });

    t.resetCalls();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const polls = t.calls({ path: '/api/v4/projects/7/jobs' });
    // Two pollers (demo's and bob's), each backing off from 20 to 40 ms: at most one poll per 20 ms each, never 21 per interval.
    expect(polls.length).toBeGreaterThan(2);
    expect(polls.length).toBeLessThanOrEqual(2 * (300 / 20 + 1));
    expect(new Set(polls.map((p) => p.headers['private-token']))).toEqual(new Set(['demo-token', 'bob-token']));

    for (const sub of subs.slice(0, 19)) await sub.stop();
    await vi.waitFor(() => expect(t.app.hub.stats()).toMatchObject({ pollers: 2, streams: 2 }));
    await subs[19]?.stop();
    await vi.waitFor(() => expect(t.app.hub.stats()).toMatchObject({ pollers: 1, streams: 1 }));
    await other.stop();
    await client.dispose();
    await alice.dispose();
  });

  it('backs off while nothing changes and when the upstream fails, and comes back to the base interval on a change', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, watchJob, { projectId: '7', jobId: '2001' });
    await sub.next();
    const key = [...(t.app.hub.pollers as unknown as { pollers: Map<string, unknown> }).pollers.keys()][0] ?? '';
    await vi.waitFor(() => expect(t.app.hub.pollers.intervalOf(key)).toBe(40));
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/7/jobs', status: 503 });
    await vi.waitFor(() => expect(t.calls({ path: '/api/v4/projects/7/jobs' }).length).toBeGreaterThan(0));
    expect(t.app.hub.pollers.intervalOf(key)).toBe(40);
    t.sandbox.clearFaults();
    await sub.stop();
    await client.dispose();
  });

  it('keeps the poller idle while webhooks for the project arrive', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, watchJob, { projectId: '7', jobId: '2004' });
    expect(statusOf(await sub.next())).toBe('2004:CREATED');
    await vi.waitFor(() => expect(t.calls({ path: '/api/v4/projects/7/jobs' }).length).toBeGreaterThan(0));
    const payload = JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>;
    const event = { ...payload, project_id: 7, build_id: 2004, pipeline_id: 202, build_status: 'pending' };
    expect(await postWebhook(t, JSON.stringify(event))).toEqual({ status: 200, body: { status: 'accepted' } });
    expect(statusOf(await sub.next())).toBe('2004:PENDING');
    // Three polls after the event send nothing (counted where the gateway sends, so a poll already on its way is in `sent`).
    const key = [...(t.app.hub.pollers as unknown as { pollers: Map<string, unknown> }).pollers.keys()][0] ?? '';
    const sent = t.app.gitlab.calls;
    const polls = t.app.hub.pollers.pollsOf(key);
    await vi.waitFor(() => expect(t.app.hub.pollers.pollsOf(key)).toBeGreaterThanOrEqual(polls + 3));
    expect(t.app.gitlab.calls).toBe(sent);
    expect(t.app.hub.stats().pollers).toBe(1);
    await sub.stop();
    await client.dispose();
  });

  it('stops polling when the last subscriber leaves, however it leaves', async () => {
    const first = wsClient(t);
    const second = wsClient(t);
    const a = wsSubscribe(first, watchJob, { projectId: '1', jobId: '1001' });
    const b = wsSubscribe(second, watchPipeline, { projectId: '1', pipelineId: '101' });
    const c = sseSubscribe(t, watchJob, { projectId: '1', jobId: '1002' });
    const d = sseSubscribe(t, projectImport, { projectId: '1' }, { 'private-token': 'alice-token' });
    await a.next();
    await b.take(5);
    await c.next();
    await d.next();
    // Unsubscribe (complete), disconnect abruptly, abort an SSE request.
    await a.stop();
    (second as unknown as { terminate(): void }).terminate();
    await c.stop();
    await expectAllReleased(t);
    expect(t.app.websocket.connections).toBeLessThanOrEqual(1);
    await first.dispose();
    await vi.waitFor(() => expect(t.app.websocket.connections).toBe(0));
    // No poller and no timer is left to send anything (expectAllReleased waited for both to be 0).
    expect(t.app.hub.stats()).toEqual({ pollers: 0, timers: 0, topics: 0, streams: 0 });
  });

  it('releases everything when the client goes away before reading a single event', async () => {
    const client = wsClient(t);
    const iterator = client.iterate({ query: watchJob, variables: { projectId: '1', jobId: '1001' } });
    const first = iterator.next();
    await vi.waitFor(() => expect(t.app.hub.stats().streams).toBe(1));
    await client.dispose();
    await first.catch(() => undefined);
    await expectAllReleased(t);
  });
});

const projectImport = 'subscription ($projectId: ID!) { projectImportStatusUpdated(projectId: $projectId) { id pathWithNamespace importStatus } }';

describe('projectImportStatusUpdated', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('follows a fork until its import finishes, then completes', async () => {
    const fork = await t.gql<{ projectFork: { project: { id: string } } }>(
      'mutation { projectFork(input: { id: "platform/core", namespacePath: "demo", path: "core-live", name: "Core Live" }) { project { id importStatus } errors { message } } }',
    );
    const id = fork.data?.projectFork.project.id;
    expect(id).toMatch(/^gid:\/\/duograph\/Project\/\d+$/);
    const client = wsClient(t);
    const sub = wsSubscribe(client, projectImport, { projectId: id });
    const status = (r: Result) => (r.data?.projectImportStatusUpdated as { importStatus: string } | undefined)?.importStatus;
    expect(status(await sub.next())).toBe('scheduled');
    t.sandbox.advance(STEP_MS);
    expect(status(await sub.next())).toBe('started');
    t.sandbox.advance(STEP_MS);
    expect(status(await sub.next())).toBe('finished');
    expect(await sub.completes()).toBe(true);
    await client.dispose();
  });

  it('emits a project that is not importing once and completes', async () => {
    const sub = sseSubscribe(t, projectImport, { projectId: '1' });
    expect((await sub.next()).data).toEqual({
      projectImportStatusUpdated: { id: 'gid://duograph/Project/1', pathWithNamespace: 'platform/core', importStatus: 'none' },
    });
    expect(await sub.completes()).toBe(true);
  });
});

describe('access is checked per subscriber, with the codes a query gets', () => {
  let t: TestApp;
  beforeAll(async () => {
    // No retries: the upstream-failure case below fails the subscriber's first read exactly as a query's.
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '1000', UPSTREAM_RETRIES: '0' } });
  });
  afterAll(() => t.close());
  afterEach(() => expectAllReleased(t));

  const cases = [
    { name: 'a project the caller cannot see', variables: { projectId: '10' }, token: 'demo-token', code: 'NOT_FOUND' },
    { name: 'jobs of a project where the caller is a Guest', variables: { projectId: '2' }, token: 'demo-token', code: 'FORBIDDEN' },
    { name: 'a job that does not exist', variables: { projectId: '1', jobId: '999999' }, token: 'demo-token', code: 'NOT_FOUND' },
    { name: 'a bad token', variables: { projectId: '1' }, token: 'wrong-token', code: 'UNAUTHENTICATED' },
  ];

  for (const c of cases) {
    it(`refuses ${c.name} over graphql-ws and SSE`, async () => {
      const query = 'subscription ($projectId: ID!, $jobId: ID) { jobStatusUpdated(projectId: $projectId, jobId: $jobId) { restId } }';
      const client = wsClient(t, { 'Private-Token': c.token });
      const overWs = await wsSubscribe(client, query, c.variables).next();
      const overSse = await sseSubscribe(t, query, c.variables, { 'private-token': c.token }).next();
      for (const result of [overWs, overSse]) {
        expect(result.errors?.[0]?.extensions?.code).toBe(c.code);
        expect(JSON.stringify(result)).not.toContain(c.token);
      }
      await client.dispose();
    });
  }

  it('gives the code a query gets for the same read', async () => {
    const query = await t.gql<{ project: { jobs: unknown } }>('{ project(id: "2") { jobs { nodes { id } } } }');
    expect(query.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('maps an upstream failure as a query would', async () => {
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/1/jobs/1001', status: 502, times: 2 });
    const client = wsClient(t);
    const result = await wsSubscribe(client, watchJob, { projectId: '1', jobId: '1001' }).next();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstream: { name: 'gitlab', status: 502 } });
    t.sandbox.clearFaults();
    await client.dispose();
  });

  it('refuses bad arguments with BAD_USER_INPUT', async () => {
    const client = wsClient(t);
    const result = await wsSubscribe(client, watchJob, { projectId: '1', jobId: 'gid://duograph/Job/7/2001' }).next();
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await client.dispose();
  });

  it('lets anonymous subscribers read what GitLab shows them when credentials are not required', async () => {
    const client = wsClient(t, {});
    const project = await wsSubscribe(client, projectImport, { projectId: '7' }).next();
    expect(project.data).toEqual({
      projectImportStatusUpdated: { id: 'gid://duograph/Project/7', pathWithNamespace: 'demo/playground', importStatus: 'none' },
    });
    // GitLab's jobs API needs authentication even on public projects.
    expect((await wsSubscribe(client, watchJob, { projectId: '7', jobId: '2001' }).next()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await client.dispose();
  });
});

describe('REQUIRE_CREDENTIALS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { REQUIRE_CREDENTIALS: 'true' } });
  });
  afterAll(() => t.close());

  /** The close code the server answers connection_init with, or 'open' when it acknowledges; `headers` go on the upgrade request. */
  function connect(params: Record<string, unknown> | undefined, headers: Record<string, string> = {}): Promise<number | 'open'> {
    return new Promise((resolve) => {
      const socket = new WebSocket(t.url.href.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers });
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: params })));
      socket.on('message', (data) => {
        if (JSON.parse(String(data)).type === 'connection_ack') {
          socket.close();
          resolve('open');
        }
      });
      socket.on('close', (code) => resolve(code));
    });
  }

  it('refuses a connection without valid credentials at connection_init', async () => {
    expect(await connect(undefined)).toBe(4403);
    expect(await connect({ 'Private-Token': 'wrong-token' })).toBe(4403);
    expect(await connect({ 'Private-Token': 'bad\nvalue' })).toBe(4403);
    expect(await connect({ 'Private-Token': 'demo-token' })).toBe('open');
    expect(await connect({ Authorization: 'Bearer alice-token' })).toBe('open');
  });

  it("takes the upgrade request's credential headers when connectionParams carry none, as routers send them", async () => {
    expect(await connect(undefined, { 'private-token': 'demo-token' })).toBe('open');
    expect(await connect({}, { authorization: 'Bearer alice-token' })).toBe('open');
    expect(await connect(undefined, { 'private-token': 'wrong-token' })).toBe(4403);
    // connectionParams that name a credential win, whatever the upgrade request says.
    expect(await connect({ 'Private-Token': 'wrong-token' }, { 'private-token': 'demo-token' })).toBe(4403);
    // Over the socket, the subscription runs as the header's user: alice sees alice/secret-notes (10), demo does not.
    class AsAlice extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: { 'private-token': 'alice-token' } });
      }
    }
    const client = createWsClient({ url: t.url.href.replace(/^http/, 'ws'), webSocketImpl: AsAlice, retryAttempts: 0, lazy: true });
    const project = await wsSubscribe(client, projectImport, { projectId: '10' }).next();
    expect(project.data).toEqual({ projectImportStatusUpdated: expect.objectContaining({ pathWithNamespace: 'alice/secret-notes' }) });
    await client.dispose();
  });

  it('refuses an anonymous SSE subscription with UNAUTHENTICATED', async () => {
    const result = await sseSubscribe(t, watchJob, { projectId: '7', jobId: '2001' }, {}).next();
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('jobStatusUpdated from GitLab webhooks', () => {
  let t: TestApp;
  beforeEach(async () => {
    // Pollers wait a minute: everything these tests see comes from webhooks.
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { GITLAB_WEBHOOK_SECRET: SECRET, POLL_INTERVAL_MS: '60000', WEBHOOK_MAX_BYTES: '65536' } });
    await t.gql('mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }');
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('registers the receiver on a project through jobStatusWebhookRegister, once', async () => {
    const register =
      'mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { hook { id url jobEvents pipelineEvents pushEvents } errors { message } } }';
    const first = await t.gql<{ jobStatusWebhookRegister: { hook: { id: string; url: string } } }>(register);
    expect(first.data?.jobStatusWebhookRegister).toMatchObject({
      hook: { url: t.app.webhookUrl(), jobEvents: true, pipelineEvents: true, pushEvents: false },
      errors: [],
    });
    const again = await t.gql<{ jobStatusWebhookRegister: { hook: { id: string } } }>(register);
    expect(again.data?.jobStatusWebhookRegister.hook.id).toBe(first.data?.jobStatusWebhookRegister.hook.id);
    // beforeEach registered it already: both calls update that hook.
    const sent = t.calls({ path: /\/hooks/ }).filter((c) => c.method !== 'GET');
    expect(sent.map((c) => c.method)).toEqual(['POST', 'PUT', 'PUT']);
  });

  it('refuses registration to a caller who may not add hooks', async () => {
    const result = await t.gql<{ jobStatusWebhookRegister: { errors: unknown[] } | null }>(
      'mutation { jobStatusWebhookRegister(input: { projectId: "platform/core" }) { hook { id } errors { message code } } }',
      {},
      { token: 'demo-token' },
    );
    const failed = result.data?.jobStatusWebhookRegister?.errors.length || result.errors?.length;
    expect(failed).toBeGreaterThan(0);
  });

  it("delivers the sandbox's job and pipeline webhooks to graphql-ws and SSE subscribers", async () => {
    const client = wsClient(t);
    const overWs = wsSubscribe(client, watchPipeline, { projectId: '7', pipelineId: '202' });
    const overSse = sseSubscribe(t, watchJob, { projectId: '7', jobId: '2003' });
    expect((await overWs.take(3)).map(statusOf)).toEqual(['2003:RUNNING', '2004:CREATED', '2005:CREATED']);
    expect(statusOf(await overSse.next())).toBe('2003:RUNNING');
    t.resetCalls();
    const deliveredBefore = t.sandbox.deliveries.length;

    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    const deliveries = t.sandbox.deliveries.slice(deliveredBefore);
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => d.url === t.app.webhookUrl() && d.status === 200)).toBe(true);
    expect(new Set(deliveries.map((d) => d.event))).toEqual(new Set(['Job Hook', 'Pipeline Hook']));

    const seen = (await overWs.take(3)).map(statusOf);
    expect(seen.sort()).toEqual(['2003:FAILED', '2004:SKIPPED', '2005:SKIPPED']);
    expect(statusOf(await overSse.next())).toBe('2003:FAILED');
    // The job hook and the pipeline hook both report 2003's failure (to the ms and to the second): it goes out once.
    await expect(overWs.next(300)).rejects.toThrow(/no result/);
    // No poll ran: the changes came from webhooks; each event cost one read per credential scope.
    expect(t.calls({ path: '/api/v4/projects/7/jobs' })).toEqual([]);
    await overWs.stop();
    await overSse.stop();
    await client.dispose();
  });

  it('drops a redelivery (same Idempotency-Key) and an identical event', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, watchJob, { projectId: '7', jobId: '2004' });
    expect(statusOf(await sub.next())).toBe('2004:CREATED');
    const payload = JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>;
    const event = JSON.stringify({
      ...payload,
      project_id: 7,
      build_id: 2004,
      pipeline_id: 202,
      build_status: 'running',
      build_started_at: '2024-04-01T13:00:00.000Z',
    });
    expect(await postWebhook(t, event, { 'idempotency-key': 'key-1' })).toEqual({ status: 200, body: { status: 'accepted' } });
    expect(statusOf(await sub.next())).toBe('2004:RUNNING');
    expect(await postWebhook(t, event, { 'idempotency-key': 'key-1' })).toEqual({ status: 200, body: { status: 'duplicate' } });
    expect(await postWebhook(t, event, { 'idempotency-key': 'key-2' })).toEqual({ status: 200, body: { status: 'duplicate' } });
    const other = JSON.stringify({ ...JSON.parse(event), build_status: 'success', build_finished_at: '2024-04-01T13:01:00.000Z' });
    expect(await postWebhook(t, other, { 'idempotency-key': 'key-1' })).toEqual({ status: 200, body: { status: 'duplicate' } });
    // Same body under a new key: still the same event.
    expect(await postWebhook(t, other, { 'idempotency-key': 'key-3' })).toEqual({ status: 200, body: { status: 'duplicate' } });
    const last = JSON.stringify({ ...JSON.parse(other), build_finished_at: '2024-04-01T13:02:00.000Z' });
    expect(await postWebhook(t, last, { 'idempotency-key': 'key-4', 'x-gitlab-event-uuid': 'uuid-1' })).toEqual({ status: 200, body: { status: 'accepted' } });
    // A redelivery with a new Idempotency-Key and a re-rendered body, caught by the event UUID and state.
    const rerendered = JSON.stringify({ ...JSON.parse(last), user: null });
    expect(await postWebhook(t, rerendered, { 'idempotency-key': 'key-5', 'x-gitlab-event-uuid': 'uuid-1' })).toEqual({
      status: 200,
      body: { status: 'duplicate' },
    });
    expect(statusOf(await sub.next())).toBe('2004:SUCCESS');
    await sub.stop();
    await client.dispose();
  });

  it('does not go back from a finished state when events arrive out of order', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, watchJob, { projectId: '7', jobId: '2002' });
    expect(statusOf(await sub.next())).toBe('2002:SUCCESS');
    const payload = JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>;
    const late = JSON.stringify({ ...payload, project_id: 7, build_id: 2002, pipeline_id: 201, build_status: 'running' });
    const failed = JSON.stringify({
      ...payload,
      project_id: 7,
      build_id: 2002,
      pipeline_id: 201,
      build_status: 'failed',
      build_finished_at: '2024-04-01T13:05:00.000Z',
    });
    expect((await postWebhook(t, late)).status).toBe(200);
    expect((await postWebhook(t, failed)).status).toBe(200);
    const next = await sub.next();
    expect(statusOf(next)).toBe('2002:FAILED');
    expect(job(next)?.name).toBe('pages');
    await sub.stop();
    await client.dispose();
  });

  it('reads the real GitLab payloads, with the full job for each subscriber', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, `subscription { jobStatusUpdated(projectId: "7") { restId status webUrl runner { restId } pipeline { restId status } } }`);
    const initial = await sub.take(5);
    expect(initial.map((r) => (r.data?.jobStatusUpdated as { restId: number } | undefined)?.restId)).toEqual([2001, 2002, 2003, 2004, 2005]);
    const pipeline = JSON.parse(fixture('pipeline_event.payload.json')) as {
      project: Record<string, unknown>;
      object_attributes: Record<string, unknown>;
      builds: Record<string, unknown>[];
    };
    pipeline.project.id = 7;
    pipeline.object_attributes.id = 201;
    pipeline.builds = [{ ...pipeline.builds[0], id: 2001, status: 'canceled' }];
    expect(await postWebhook(t, JSON.stringify(pipeline), { 'x-gitlab-event': 'Pipeline Hook' })).toEqual({ status: 200, body: { status: 'accepted' } });
    const next = (await sub.next()).data?.jobStatusUpdated;
    // The state is the event's; the rest of the job is read from GitLab with the subscriber's credentials.
    expect(next).toMatchObject({ restId: 2001, status: 'CANCELED', pipeline: { restId: 201 } });
    expect((next as { webUrl: string }).webUrl).toMatch(/\/-\/jobs\/2001$/);
    await sub.stop();
    await client.dispose();
  });

  it('never delivers a webhook event to a subscriber whose credentials cannot see the job', async () => {
    const client = wsClient(t, { 'private-token': 'bob-token' });
    const sub = wsSubscribe(client, watchJob, { projectId: '6', jobId: '4001' });
    expect(statusOf(await sub.next())).toBe('4001:SUCCESS');
    const payload = JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>;
    // GitLab no longer shows bob the job when the first event comes in: that event never reaches him.
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/6/jobs/4001', status: 404, body: '{"message":"404 Not found"}', times: 1 });
    expect((await postWebhook(t, JSON.stringify({ ...payload, project_id: 6, build_id: 4001, build_status: 'canceled' }))).status).toBe(200);
    expect((await postWebhook(t, JSON.stringify({ ...payload, project_id: 6, build_id: 4001, build_status: 'failed' }))).status).toBe(200);
    expect(statusOf(await sub.next())).toBe('4001:FAILED');
    await sub.stop();
    await client.dispose();
  });
});

describe('POST /webhooks/gitlab', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { GITLAB_WEBHOOK_SECRET: SECRET, WEBHOOK_MAX_BYTES: '65536' } });
  });
  afterAll(() => t.close());

  it("accepts GitLab's own job and pipeline payloads", async () => {
    expect(await postWebhook(t, fixture('job_event.payload.json'))).toEqual({ status: 200, body: { status: 'accepted' } });
    expect(await postWebhook(t, fixture('pipeline_event.payload.json'), { 'x-gitlab-event': 'Pipeline Hook' })).toEqual({
      status: 200,
      body: { status: 'accepted' },
    });
  });

  it('answers 401 without the right X-Gitlab-Token, and never echoes it', async () => {
    for (const token of [undefined, '', 'not-the-secret', `${SECRET}x`, SECRET.slice(0, -1)]) {
      const response = await fetch(new URL('/webhooks/gitlab', t.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { 'x-gitlab-token': token }) },
        body: fixture('job_event.payload.json'),
      });
      expect(response.status).toBe(401);
      const text = await response.text();
      expect(text).not.toContain(SECRET);
      if (token) expect(text).not.toContain(token);
    }
  });

  it('answers 400 to a body that is not JSON or not a well-formed event, and 200 to other event kinds', async () => {
    expect((await postWebhook(t, '{"object_kind": "build", ')).status).toBe(400);
    expect((await postWebhook(t, '[]')).status).toBe(400);
    expect((await postWebhook(t, JSON.stringify({ object_kind: 'build', build_id: 'x' }))).status).toBe(400);
    expect((await postWebhook(t, JSON.stringify({ object_kind: 'pipeline', object_attributes: {} }))).status).toBe(400);
    expect(await postWebhook(t, JSON.stringify({ object_kind: 'push' }), { 'x-gitlab-event': 'Push Hook' })).toMatchObject({
      status: 200,
      body: { status: 'ignored' },
    });
  });

  it('answers 413 to an oversized body, declared or streamed, and keeps serving', async () => {
    const big = JSON.stringify({ object_kind: 'build', padding: 'x'.repeat(70_000) });
    expect((await postWebhook(t, big)).status).toBe(413);
    const chunked = await fetch(new URL('/webhooks/gitlab', t.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(10_000)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await postWebhook(t, fixture('job_event.payload.json'), { 'idempotency-key': 'after-413' })).toMatchObject({ status: 200 });
  });

  it('answers 405 to other methods', async () => {
    const response = await fetch(new URL('/webhooks/gitlab', t.url));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('the demo pipeline that runs again every minute', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual', demoPipelineEveryMs: 60_000 }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('starts a new run of demo/playground each minute, which a subscriber by full path sees move to success', async () => {
    const newest = async () => {
      const res = await t.gql<{ project: { jobs: { nodes: { restId: number; name: string; status: string }[] } } }>(
        '{ project(fullPath: "demo/playground") { jobs(first: 2) { nodes { restId name status } } } }',
      );
      return res.data?.project.jobs.nodes ?? [];
    };
    const before = await newest();
    t.sandbox.advance(60_000);
    const [pages, test] = await newest();
    expect(test).toMatchObject({ name: 'test', status: 'PENDING' });
    expect(pages).toMatchObject({ name: 'pages', status: 'CREATED' });
    expect(test?.restId).toBeGreaterThan(Math.max(...before.map((j) => j.restId)));

    const sub = sseSubscribe(t, watchJob, { projectId: 'demo/playground', jobId: String(test?.restId) });
    expect(statusOf(await sub.next())).toBe(`${test?.restId}:PENDING`);
    t.sandbox.advance(STEP_MS);
    expect(statusOf(await sub.next())).toBe(`${test?.restId}:RUNNING`);
    t.sandbox.advance(STEP_MS);
    expect(statusOf(await sub.next())).toBe(`${test?.restId}:SUCCESS`);
    await sub.stop();

    // A minute later, the next run.
    t.sandbox.advance(60_000);
    const [, again] = await newest();
    expect(again).toMatchObject({ name: 'test' });
    expect(again?.restId).toBeGreaterThan(test?.restId ?? 0);
  });

  it("runs the log tab's job for DEMO_LOG_RUN_MS: GraphiQL's own operation sees its log arrive, then ends on its last lines", async () => {
    const { graphiqlTabs } = await import('../../src/server/graphiql.js');
    const tab = graphiqlTabs({ 'Private-Token': 'demo-token' })[5]?.query ?? '';
    type LogChunk = { offset: number; text: string; complete: boolean; status: string | null };
    const sub = sseSubscribe(t, tab, {});
    const first = (await sub.next()).data?.jobLogAppended as LogChunk;
    expect(first.text).toContain('rspec: step');
    expect(first.complete).toBe(false);
    // Minutes on, the job still runs and writes.
    t.sandbox.advance(5 * 60_000);
    const later = (await sub.next()).data?.jobLogAppended as LogChunk;
    expect(later.offset).toBeGreaterThan(first.offset);
    expect(later.complete).toBe(false);
    const chunks = [later];
    t.sandbox.advance(DEMO_LOG_RUN_MS);
    while (!chunks.at(-1)?.complete) chunks.push((await sub.next()).data?.jobLogAppended as LogChunk);
    expect(chunks.at(-1)?.status).toBe('SUCCESS');
    expect(await sub.completes()).toBe(true);
    // Opened after the job ended, the tab shows the log's last lines, marked complete.
    const after = sseSubscribe(t, tab, {});
    const ended = (await after.next()).data?.jobLogAppended as LogChunk;
    expect(ended).toMatchObject({ complete: true, status: 'SUCCESS' });
    expect(ended.text).toContain('Job succeeded');
    expect(await after.completes()).toBe(true);
  });
});

describe('a subscriber whose access is revoked', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('gets UNAUTHENTICATED within one poll and completes; its poller stops; another credential keeps watching', async () => {
    const alice = sseSubscribe(t, watchJob, { projectId: '1', jobId: '1014' }, { 'private-token': 'alice-token' });
    const demo = sseSubscribe(t, watchJob, { projectId: '1', jobId: '1014' }, { 'private-token': 'demo-token' });
    expect(statusOf(await alice.next())).toBe('1014:PENDING');
    expect(statusOf(await demo.next())).toBe('1014:PENDING');
    await vi.waitFor(() => expect(t.app.hub.stats().pollers).toBe(2));

    t.sandbox.revokeToken('alice-token');
    const ended = await alice.next();
    expect(ended.data).toEqual({ jobStatusUpdated: null });
    expect(ended.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED', upstream: { status: 401 } } });
    expect(await alice.completes()).toBe(true);

    // Alice's poller is gone, and nothing more is sent with her token.
    await vi.waitFor(() => expect(t.app.hub.stats().pollers).toBe(1));
    const withAlice = () => t.calls().filter((c) => c.headers['private-token'] === 'alice-token').length;
    const sent = withAlice();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(withAlice()).toBe(sent);

    // Demo's subscription, another credential group on the same project, goes on.
    t.sandbox.advance(STEP_MS);
    expect(statusOf(await demo.next())).toBe('1014:RUNNING');
    await demo.stop();
  });

  it('ends a graphql-ws subscription the same way, with the error and then complete', async () => {
    const client = wsClient(t, { 'Private-Token': 'bob-token' });
    const bob = wsSubscribe(client, watchJob, { projectId: '1', jobId: '1014' });
    expect(statusOf(await bob.next())).toBe('1014:PENDING');
    t.sandbox.revokeToken('bob-token');
    const ended = await bob.next();
    expect(ended.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    expect(await bob.completes()).toBe(true);
    await client.dispose();
  });

  it('ends too while webhooks keep its poller idle: the poller still checks the credentials on its schedule', async () => {
    const t2 = await createTestApp({
      sandbox: { clock: 'manual' },
      env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', GITLAB_WEBHOOK_SECRET: SECRET },
      app: { accessRecheckMs: 300 },
    });
    try {
      const sub = sseSubscribe(t2, watchJob, { projectId: '7', jobId: '2004' }, { 'private-token': 'demo-token' });
      expect(statusOf(await sub.next())).toBe('2004:CREATED');
      const payload = JSON.parse(fixture('job_event.payload.json')) as Record<string, unknown>;
      const event = { ...payload, project_id: 7, build_id: 2004, pipeline_id: 202, build_status: 'pending' };
      expect(await postWebhook(t2, JSON.stringify(event))).toEqual({ status: 200, body: { status: 'accepted' } });
      expect(statusOf(await sub.next())).toBe('2004:PENDING');
      // Webhooks flow: the poller reads no job list now, only the access check on its schedule (a one-job page).
      // Seen happening after the webhook, before the token goes: otherwise a poll still under way when it went
      // could be the call that finds the revocation, and the check would not be shown.
      const rechecks = () => t2.calls({ path: '/api/v4/projects/7/jobs' }).filter((c) => c.query.per_page?.[0] === '1').length;
      const before = rechecks();
      await vi.waitFor(() => expect(rechecks()).toBeGreaterThan(before));
      t2.sandbox.revokeToken('demo-token');
      // The recheck runs every 300 ms; the wait is generous for a loaded machine, not a measure of speed.
      let ended = await sub.next(15_000);
      // A poll under way when the webhook came may still report the sandbox's own state (this webhook is made up): then the end.
      for (let i = 0; i < 3 && !ended.errors; i++) ended = await sub.next(15_000);
      expect(ended.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
      expect(await sub.completes()).toBe(true);
      await expectAllReleased(t2);
    } finally {
      await t2.close();
    }
  });
});
