/**
 * Apollo's multipart HTTP subscriptions, with Apollo Client 4's own HttpLink
 * (no WebSocket link): the current state first, then each change, for jobs,
 * pipelines and logs; a client that leaves stops the polls. The raw framing
 * (boundary, payload parts, heartbeats, the end) is checked over fetch.
 */
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectAllReleased } from '../helpers/subscriptions.js';

/** Waits for the events, bounded only by the test's own timeout: an HTTP stream's parts come when the machine gets to them. */
const EVENTS = { timeout: 100_000, interval: 20 };

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
});
afterEach(async () => {
  await expectAllReleased(t);
  await t.close();
});

function apollo(token = 'demo-token'): ApolloClient {
  return new ApolloClient({ link: new HttpLink({ uri: t.url.href, headers: { 'private-token': token } }), cache: new InMemoryCache() });
}

/** A subscription through Apollo Client: its events as they come, its error, whether it completed, and a way to leave. */
function follow<T>(client: ApolloClient, query: string, variables: Record<string, unknown> = {}) {
  const events: T[] = [];
  const state: { error?: unknown; complete: boolean } = { complete: false };
  const subscription = client.subscribe<T>({ query: gql(query), variables }).subscribe({
    next: (result) => {
      if (result.error) state.error = result.error;
      else if (result.data) events.push(result.data as T);
    },
    error: (error: unknown) => {
      state.error = error;
    },
    complete: () => {
      state.complete = true;
    },
  });
  return { events, state, leave: () => subscription.unsubscribe() };
}

describe("Apollo Client's HttpLink, multipart subscriptions", { timeout: 120_000 }, () => {
  it('follows a job: its current state, then its change, and stops polling when the client leaves', async () => {
    type Event = { jobStatusUpdated: { restId: number; status: string } };
    const sub = follow<Event>(apollo(), 'subscription ($jobId: ID!) { jobStatusUpdated(projectId: "platform/core", jobId: $jobId) { restId status } }', {
      jobId: '1013',
    });
    await vi.waitFor(() => expect(sub.events.map((e) => e.jobStatusUpdated.status)).toEqual(['RUNNING']), EVENTS);
    t.sandbox.advance(STEP_MS);
    await vi.waitFor(() => expect(sub.events.map((e) => e.jobStatusUpdated.status)).toEqual(['RUNNING', 'SUCCESS']), EVENTS);
    expect(sub.state.error).toBeUndefined();
    expect(t.app.hub.stats().pollers).toBeGreaterThan(0);
    sub.leave();
    // afterEach: nothing left polling.
  });

  it("follows a branch's pipelines and a job's log to its end, with initialLimit", async () => {
    type Pipelines = { pipelineStatusUpdated: { restId: number; status: string } };
    const pipelines = follow<Pipelines>(
      apollo(),
      'subscription { pipelineStatusUpdated(projectId: "platform/core", ref: "main", initialLimit: 1) { restId status } }',
    );
    await vi.waitFor(() => expect(pipelines.events).toHaveLength(1), EVENTS);
    type Log = { jobLogAppended: { text: string; complete: boolean; status: string | null } };
    const log = follow<Log>(apollo(), 'subscription { jobLogAppended(projectId: "platform/core", jobId: "1002", tailLines: 3) { text complete status } }');
    await vi.waitFor(() => expect(log.state.complete).toBe(true), EVENTS);
    expect(log.events.at(-1)?.jobLogAppended).toMatchObject({ complete: true, status: 'SUCCESS', text: expect.stringContaining('Job succeeded') });
    pipelines.leave();
  });

  it("gives a refusal as Apollo's errors: a job the caller cannot see, and credentials GitLab refuses", async () => {
    const hidden = follow(apollo(), 'subscription { jobStatusUpdated(projectId: "platform/core", jobId: "999999") { status } }');
    await vi.waitFor(() => expect(hidden.state.error).toBeDefined(), EVENTS);
    expect(String((hidden.state.error as Error).message)).toMatch(/999999/);
    const refused = follow(apollo('nobody-token'), 'subscription { jobStatusUpdated(projectId: "platform/core", jobId: "1013") { status } }');
    await vi.waitFor(() => expect(refused.state.error).toBeDefined(), EVENTS);
    expect(hidden.events).toEqual([]);
    expect(refused.events).toEqual([]);
  });
});

describe('the framing on the wire', { timeout: 120_000 }, () => {
  it('answers in parts under the graphql boundary, with {} heartbeats, whether or not Accept quotes its parameters', async () => {
    for (const accept of [
      'multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json',
      'multipart/mixed;boundary=graphql;subscriptionSpec=1.0',
    ]) {
      const controller = new AbortController();
      const response = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, 'private-token': 'demo-token' },
        body: JSON.stringify({ query: 'subscription { jobStatusUpdated(projectId: "platform/core", jobId: "1013") { status } }' }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = '';
      // The current state, then a heartbeat once nothing changes for HEARTBEAT_MS.
      while (!text.includes('\r\n\r\n{}')) text += decoder.decode((await reader.read()).value ?? new Uint8Array());
      expect(
        text.startsWith('\r\n--graphql\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"payload":{"data":{"jobStatusUpdated":{"status":"RUNNING"}}}}'),
      ).toBe(true);
      controller.abort();
      await reader.cancel().catch(() => undefined);
    }
  });

  it("ends a subscription refused once it began with one payload part of errors and the closing boundary; one that is not valid is plain JSON, as Apollo's Accept allows", async () => {
    const accept = 'multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9';
    const ask = (query: string) =>
      fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', accept, 'private-token': 'demo-token' }, body: JSON.stringify({ query }) });
    const hidden = await ask('subscription { jobStatusUpdated(projectId: "platform/core", jobId: "999999") { status } }');
    expect(hidden.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec="1.0"');
    const text = await hidden.text();
    expect(text.endsWith('\r\n--graphql--\r\n')).toBe(true);
    const parts = text.split('\r\n--graphql').filter((p) => p.includes('{'));
    expect(parts).toHaveLength(1);
    const json = JSON.parse(parts[0]?.slice(parts[0].indexOf('\r\n\r\n')) ?? '{}') as { payload: { errors: { extensions: { code: string } }[] } };
    expect(json.payload.errors[0]?.extensions.code).toBe('NOT_FOUND');
    const invalid = await ask('subscription { jobStatusUpdated(projectId: "platform/core", jobId: "1013") { nope } }');
    expect(invalid.headers.get('content-type')).toMatch(/^application\/(graphql-response\+)?json/);
    expect(((await invalid.json()) as { errors: { message: string }[] }).errors[0]?.message).toMatch(/Cannot query field "nope"/);
  });
});
