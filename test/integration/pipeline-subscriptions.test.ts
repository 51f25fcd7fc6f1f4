/**
 * pipelineStatusUpdated end to end: the sandbox GitLab on a manual clock,
 * real graphql-ws and graphql-sse clients, pipelines followed through the
 * shared poller and through the webhooks the sandbox delivers, a retry
 * going back to running, access checked per subscriber, and everything
 * released when the subscribers leave.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectAllReleased, type Result, SECRET, sseSubscribe, wsClient, wsSubscribe } from '../helpers/subscriptions.js';

const WATCH = `subscription ($projectId: ID!, $pipelineId: ID, $ref: String, $statuses: [JobStatus!]) {
  pipelineStatusUpdated(projectId: $projectId, pipelineId: $pipelineId, ref: $ref, statuses: $statuses) { id restId ref status } }`;

const pipeline = (r: Result) => r.data?.pipelineStatusUpdated as { id: string; restId: number; ref: string; status: string } | undefined;
const statusOf = (r: Result) => `${pipeline(r)?.restId}:${pipeline(r)?.status}`;

describe('pipelineStatusUpdated from the shared poller', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', GITLAB_WEBHOOK_SECRET: SECRET } });
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('emits the pipeline now, then its change, over SSE', async () => {
    const sub = sseSubscribe(t, WATCH, { projectId: 'demo/playground', pipelineId: 'gid://duograph/Pipeline/7/202' });
    const first = await sub.next();
    expect(statusOf(first)).toBe('202:RUNNING');
    expect(pipeline(first)?.id).toBe('gid://duograph/Pipeline/7/202');
    t.sandbox.advance(STEP_MS);
    expect(statusOf(await sub.next())).toBe('202:FAILED');
    await sub.stop();
  });

  it('follows a retry back to running and on to its end, over graphql-ws', async () => {
    const client = wsClient(t);
    const sub = wsSubscribe(client, WATCH, { projectId: '7', pipelineId: '202' });
    expect(statusOf(await sub.next())).toBe('202:RUNNING');
    t.sandbox.advance(STEP_MS);
    expect(statusOf(await sub.next())).toBe('202:FAILED');
    const retried = await t.gql<{ pipelineRetry: { errors: unknown[] } }>(
      'mutation { pipelineRetry(input: { id: "gid://duograph/Pipeline/7/202" }) { errors { message } } }',
    );
    expect(retried.data?.pipelineRetry.errors).toEqual([]);
    // A finished pipeline may run again: a retry is a change, not a step back.
    expect(['202:PENDING', '202:RUNNING']).toContain(statusOf(await sub.next()));
    await sub.stop();
    await client.dispose();
  });

  it('watches a whole project by ref and status: a pipeline started later is seen when it succeeds', async () => {
    const listed = await t.gql<{ project: { pipelines: { nodes: { restId: number }[] } } }>(
      '{ project(id: 7) { pipelines(ref: "main", status: SUCCESS, first: 100) { nodes { restId } } } }',
    );
    const already = (listed.data?.project.pipelines.nodes ?? []).map((p) => p.restId).sort((a, b) => a - b);
    expect(already.length).toBeGreaterThan(0);
    const sub = sseSubscribe(t, WATCH, { projectId: '7', ref: 'main', statuses: ['SUCCESS'] });
    // The current state: exactly the successful pipelines of main, oldest first.
    expect((await sub.take(already.length)).map((r) => pipeline(r)?.restId)).toEqual(already);
    const created = await t.gql<{ pipelineCreate: { pipeline: { restId: number } } }>(
      'mutation { pipelineCreate(input: { projectId: "7", ref: "main" }) { pipeline { restId } } }',
    );
    const id = created.data?.pipelineCreate.pipeline.restId;
    for (let i = 0; i < 10; i++) t.sandbox.advance(STEP_MS);
    expect(statusOf(await sub.next())).toBe(`${id}:SUCCESS`);
    await sub.stop();
  });

  it('runs one poller per project and credentials, however many subscribe, and shares nothing across credentials', async () => {
    const a = sseSubscribe(t, WATCH, { projectId: '7', pipelineId: '202' });
    const b = sseSubscribe(t, WATCH, { projectId: '7', pipelineId: '202' });
    const c = sseSubscribe(t, WATCH, { projectId: '7' });
    await Promise.all([a.next(), b.next(), c.next()]);
    expect(t.app.hub.stats().pollers).toBe(1);
    const other = sseSubscribe(t, WATCH, { projectId: '7', pipelineId: '202' }, { 'private-token': 'bob-token' });
    expect(statusOf(await other.next())).toBe('202:RUNNING');
    expect(t.app.hub.stats().pollers).toBe(2);
    await Promise.all([a.stop(), b.stop(), c.stop(), other.stop()]);
  });

  it('refuses a subscriber who cannot see the pipeline with the code a query gets, and a pipeline of another project', async () => {
    const hidden = sseSubscribe(t, WATCH, { projectId: '8' }, { 'private-token': 'alice-token' });
    const refused = await hidden.next();
    expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const wrong = sseSubscribe(t, WATCH, { projectId: '7', pipelineId: 'gid://duograph/Pipeline/1/101' });
    expect((await wrong.next()).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const unknown = sseSubscribe(t, WATCH, { projectId: '7', pipelineId: '999999' });
    expect((await unknown.next()).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('pipelineStatusUpdated from GitLab webhooks', () => {
  let t: TestApp;
  beforeEach(async () => {
    // Pollers wait a minute: everything these tests see after the first read comes from webhooks.
    t = await createTestApp({ sandbox: { clock: 'manual' }, env: { GITLAB_WEBHOOK_SECRET: SECRET, POLL_INTERVAL_MS: '60000' } });
    await t.gql('mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }');
  });
  afterEach(async () => {
    await expectAllReleased(t);
    await t.close();
  });

  it('delivers the change from the job and pipeline hooks once, with one read of the pipeline per credential scope', async () => {
    const client = wsClient(t);
    const overWs = wsSubscribe(client, WATCH, { projectId: '7', pipelineId: '202' });
    const overSse = sseSubscribe(t, WATCH, { projectId: '7', pipelineId: '202' });
    expect(statusOf(await overWs.next())).toBe('202:RUNNING');
    expect(statusOf(await overSse.next())).toBe('202:RUNNING');
    t.resetCalls();
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    expect(statusOf(await overWs.next())).toBe('202:FAILED');
    expect(statusOf(await overSse.next())).toBe('202:FAILED');
    // The job hook and the pipeline hook both report the failure: it goes out once.
    await expect(overWs.next(300)).rejects.toThrow(/no result/);
    // No list was polled; each event cost at most one read of the pipeline for the one credential scope.
    expect(t.calls({ path: '/api/v4/projects/7/pipelines' })).toEqual([]);
    const reads = t.calls({ path: '/api/v4/projects/7/pipelines/202' });
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThanOrEqual(new Set(t.sandbox.deliveries.map((d) => d.event)).size * 3);
    await overWs.stop();
    await overSse.stop();
    await client.dispose();
  });
});
