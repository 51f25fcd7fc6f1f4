/**
 * Subscriptions for routers in the HTTP callback protocol (callback/1.0),
 * against a router's end that records what it is sent: the check before
 * the answer, each event as `next`, heartbeats, `complete` at the end and at
 * shutdown, stopping without a word on 404, and callback URLs outside
 * SUBSCRIPTION_CALLBACK_URLS refused before any call. Hive Gateway's own
 * callback transport runs against it in test/e2e/hive-gateway.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { callbackAllowed } from '../../src/server/subscription-callback.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type CallbackMessage, type CallbackRouter, startCallbackRouter } from '../helpers/callback-router.js';
import { expectAllReleased } from '../helpers/subscriptions.js';

/** Waits for what the router is sent, bounded only by the test's own timeout: the POSTs come when the machine gets to them. */
const EVENTS = { timeout: 100_000, interval: 20 };
const JOB = 'subscription { jobStatusUpdated(projectId: "platform/core", jobId: "1013") { restId status } }';

let router: CallbackRouter;
let t: TestApp;
let closed = false;
beforeEach(async () => {
  router = await startCallbackRouter();
  closed = false;
  t = await createTestApp({
    sandbox: { clock: 'manual' },
    env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40', SUBSCRIPTION_CALLBACK_URLS: `${router.origin}/callback/` },
  });
});
afterEach(async () => {
  if (!closed) {
    await expectAllReleased(t);
    await t.close();
  }
  await router.close();
});

/** POSTs a subscription as a router does: the callback extension, Accept naming callbackSpec=1.0, the caller's credentials. */
async function subscribe(
  query: string,
  subscription: Record<string, unknown>,
  headers: Record<string, string> = { 'private-token': 'demo-token' },
): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const response = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json;callbackSpec=1.0; charset=utf-8', ...headers },
    body: JSON.stringify({ query, extensions: { subscription } }),
  });
  return { status: response.status, body: (await response.json()) as never };
}

function asked(id: string, heartbeatIntervalMs = 60_000) {
  return { callbackUrl: router.callbackUrl(id), subscriptionId: id, verifier: `verifier-${id}`, heartbeatIntervalMs };
}

const actions = (id: string) => router.messages.filter((m) => m.body.id === id).map((m) => m.body.action);
const payloads = (id: string) => router.messages.filter((m) => m.body.id === id && m.body.action === 'next').map((m) => m.body.payload);

describe('callback/1.0 subscriptions', { timeout: 120_000 }, () => {
  it('checks first, answers {"data": null}, then posts each event as next, every message echoing the id and verifier', async () => {
    const answer = await subscribe(JOB, asked('s1', 2_000));
    expect(answer).toEqual({ status: 200, body: { data: null } });
    // The check went out before the router's request was answered.
    expect(router.messages[0]?.body).toEqual({ kind: 'subscription', action: 'check', id: 's1', verifier: 'verifier-s1' });
    await vi.waitFor(() => expect(payloads('s1')).toEqual([{ data: { jobStatusUpdated: { restId: 1013, status: 'RUNNING' } } }]), EVENTS);
    t.sandbox.advance(STEP_MS);
    await vi.waitFor(() => expect(payloads('s1')).toHaveLength(2), EVENTS);
    expect(payloads('s1')[1]).toEqual({ data: { jobStatusUpdated: { restId: 1013, status: 'SUCCESS' } } });
    for (const message of router.messages) {
      expect(message.path).toBe('/callback/s1');
      expect(message.headers['content-type']).toBe('application/json');
      expect(message.headers['subscription-protocol']).toBe('callback/1.0');
      expect(message.body).toMatchObject({ kind: 'subscription', id: 's1', verifier: 'verifier-s1' });
    }
    // The router forgets it: the next heartbeat gets 404, the subscription stops, and nothing more is sent.
    router.answer = () => 404;
    await expectAllReleased(t);
    expect(actions('s1').at(-1)).toBe('check');
  });

  it("runs with the router's credentials: the caller's token reaches GitLab; an invalid or refused operation is answered as JSON errors, with no callback", async () => {
    t.resetCalls();
    await subscribe(JOB, asked('s2', 2_000), { 'private-token': 'bob-token' });
    await vi.waitFor(() => expect(payloads('s2')).toHaveLength(1), EVENTS);
    expect(new Set(t.calls().map((c) => c.headers['private-token']))).toEqual(new Set(['bob-token']));
    router.answer = () => 404;
    await expectAllReleased(t);
    router.answer = () => 204;

    const before = router.messages.length;
    const invalid = await subscribe('subscription { jobStatusUpdated(projectId: "platform/core", jobId: "1013") { nope } }', asked('s3'));
    expect(invalid.body.errors?.[0]?.message).toMatch(/Cannot query field "nope"/);
    expect(router.messages.length).toBe(before);

    // Credentials GitLab refuses: refused before the subscription starts, so no callback either.
    const refused = await subscribe(JOB, asked('s4'), { 'private-token': 'not-a-token' });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(router.messages.length).toBe(before);
    expect(JSON.stringify(router.messages)).not.toContain('not-a-token');
  });

  it('posts a check when half the heartbeat interval passes without a message, and complete when the stream ends', async () => {
    expect(
      (await subscribe('subscription { jobLogAppended(projectId: "platform/core", jobId: "1013", tailLines: 2) { complete status } }', asked('s5', 2_000)))
        .status,
    ).toBe(200);
    await vi.waitFor(() => expect(payloads('s5').length).toBeGreaterThan(0), EVENTS);
    // Nothing changes while the clock stands: heartbeats only.
    const events = payloads('s5').length;
    await vi.waitFor(() => expect(actions('s5').filter((a) => a === 'check').length).toBeGreaterThanOrEqual(3), EVENTS);
    expect(payloads('s5')).toHaveLength(events);
    t.sandbox.advance(STEP_MS);
    await vi.waitFor(() => expect(actions('s5').at(-1)).toBe('complete'), EVENTS);
    expect(payloads('s5').at(-1)).toEqual({ data: { jobLogAppended: { complete: true, status: 'SUCCESS' } } });
    expect(router.messages.filter((m) => m.body.id === 's5').at(-1)?.body).toEqual({
      kind: 'subscription',
      action: 'complete',
      id: 's5',
      verifier: 'verifier-s5',
    });
  });

  it('answers 500 and starts nothing when the router keeps refusing the first check; a router that only needed a moment gets the subscription', async () => {
    router.answer = () => 404;
    const answer = await subscribe(JOB, asked('s6'));
    expect(answer.status).toBe(500);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('CALLBACK_CHECK_FAILED');
    // Tried again, as a router may not have set the subscription up yet; never anything but a check.
    expect(actions('s6').length).toBeGreaterThan(1);
    expect(new Set(actions('s6'))).toEqual(new Set(['check']));

    let refusals = 1;
    router.answer = () => (refusals-- > 0 ? 404 : 204);
    expect((await subscribe(JOB, asked('s9'))).body).toEqual({ data: null });
    await vi.waitFor(() => expect(payloads('s9')).toHaveLength(1), EVENTS);
    expect(actions('s9').slice(0, 3)).toEqual(['check', 'check', 'next']);
    router.answer = () => 404;
    t.sandbox.advance(STEP_MS);
    await expectAllReleased(t);
  });

  it('retries a message the router answered with a 5xx, and ends a subscription whose router keeps failing', async () => {
    let failures = 2;
    router.answer = (message: CallbackMessage) => (message.body.action === 'next' && failures-- > 0 ? 503 : 204);
    await subscribe(JOB, asked('s7'));
    await vi.waitFor(() => expect(payloads('s7')).toHaveLength(3), EVENTS);
    // The same event three times: two refused, the third taken.
    expect(new Set(payloads('s7').map((p) => JSON.stringify(p))).size).toBe(1);
    router.answer = () => 500;
    t.sandbox.advance(STEP_MS);
    await expectAllReleased(t);
    expect(actions('s7')).not.toContain('complete');
  });

  it('sends complete for every callback subscription when the gateway shuts down', async () => {
    await subscribe(JOB, asked('s8'));
    await vi.waitFor(() => expect(payloads('s8')).toHaveLength(1), EVENTS);
    closed = true;
    await t.close();
    expect(actions('s8').at(-1)).toBe('complete');
  });
});

describe('callback URLs', { timeout: 120_000 }, () => {
  it('refuses a callback URL outside SUBSCRIPTION_CALLBACK_URLS, or a malformed extension, before any call', async () => {
    const refused = [
      `${router.origin}/callbacks/x`,
      `${router.origin}/other/x`,
      `${router.origin.replace('127.0.0.1', 'localhost')}/callback/x`,
      `${router.origin.replace('http:', 'https:')}/callback/x`,
      `${router.origin.replace('//', '//user:pass@')}/callback/x`,
      'file:///etc/passwd',
      'not a url',
    ];
    for (const callbackUrl of refused) {
      const answer = await subscribe(JOB, { ...asked('x'), callbackUrl });
      expect(answer.status).toBe(403);
      expect(answer.body.errors?.[0]).toMatchObject({
        message: 'The callback URL is not under one this gateway may call (SUBSCRIPTION_CALLBACK_URLS).',
        extensions: { code: 'CALLBACK_URL_NOT_ALLOWED' },
      });
    }
    const malformed = await subscribe(JOB, { callbackUrl: router.callbackUrl('x'), subscriptionId: 'x' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(router.messages).toEqual([]);
    expect(t.calls()).toEqual([]);
  });

  it('sends no callback at all unless an operator allowed some', async () => {
    const plain = await createTestApp();
    try {
      const response = await fetch(plain.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json;callbackSpec=1.0', 'private-token': 'demo-token' },
        body: JSON.stringify({ query: JOB, extensions: { subscription: asked('y') } }),
      });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { errors: { message: string }[] }).errors[0]?.message).toBe(
        'This gateway sends no subscription callbacks: its operator allows no callback URL (SUBSCRIPTION_CALLBACK_URLS).',
      );
      expect(router.messages).toEqual([]);
    } finally {
      await plain.close();
    }
  });

  it('matches whole path segments of the same origin', () => {
    const allowed = ['https://router.example.com/callback', 'http://10.0.0.5:4000/'];
    expect(callbackAllowed(new URL('https://router.example.com/callback/abc'), allowed)).toBe(true);
    expect(callbackAllowed(new URL('https://router.example.com/callback'), allowed)).toBe(true);
    expect(callbackAllowed(new URL('https://router.example.com/callbackevil/abc'), allowed)).toBe(false);
    expect(callbackAllowed(new URL('https://router.example.com/callback/../admin'), allowed)).toBe(false);
    expect(callbackAllowed(new URL('https://router.example.com:8443/callback/abc'), allowed)).toBe(false);
    expect(callbackAllowed(new URL('http://10.0.0.5:4000/anything'), allowed)).toBe(true);
    expect(callbackAllowed(new URL('http://10.0.0.50:4000/anything'), allowed)).toBe(false);
  });
});
