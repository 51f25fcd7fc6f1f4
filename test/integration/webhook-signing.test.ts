/**
 * Signed webhooks (Standard Webhooks, as GitLab 19.0+ signs deliveries with
 * a hook's `signing_token`): the receiver verifies them where
 * GITLAB_WEBHOOK_SIGNING_TOKEN is set, refuses a timestamp outside 5
 * minutes, acts once on a repeated `webhook-id`, and keeps X-Gitlab-Token for
 * instances without signing. jobStatusWebhookRegister relies on the signing
 * token only when GitLab answers `signing_token_present: true`. Over real
 * HTTP; signatures made here by hand, per the Standard Webhooks spec.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_MS } from '../../src/sandbox/gitlab/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const SECRET = 'webhook-signing-secret-0123456789abcdef';
const KEY = Buffer.from('a signing key of 32 bytes, or so').toString('base64');
const SIGNING_TOKEN = `whsec_${KEY}`;
const fixture = JSON.parse(readFileSync(new URL('../fixtures/gitlab-webhooks/job_event.payload.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/** `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` keyed by the token's base64 part (standardwebhooks.com, "Signature scheme"). */
function sign(id: string, timestamp: number, body: string, key = KEY): string {
  return `v1,${createHmac('sha256', Buffer.from(key, 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

async function post(t: TestApp, body: string, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(new URL('/webhooks/gitlab', t.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Job Hook', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('signed webhooks', () => {
  let t: TestApp;
  let legacy: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      sandbox: { clock: 'manual', webhookSigning: true },
      env: { GITLAB_WEBHOOK_SECRET: SECRET, GITLAB_WEBHOOK_SIGNING_TOKEN: SIGNING_TOKEN },
    });
    // A GitLab before 19.0 (or with signing off): it ignores signing_token.
    legacy = await createTestApp({ sandbox: { clock: 'manual' }, env: { GITLAB_WEBHOOK_SECRET: SECRET, GITLAB_WEBHOOK_SIGNING_TOKEN: SIGNING_TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
    await legacy?.close();
  });

  it('verifies a signature, refuses a wrong one or a stale timestamp, and acts once on a repeated webhook-id', async () => {
    const body = JSON.stringify({ ...fixture, project_id: 7, build_id: 2003, build_status: 'running' });
    const id = `msg_${randomUUID()}`;
    const now = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': `v1,bm90IGl0 ${sign(id, now, body)}` };
    expect(await post(t, body, headers)).toEqual({ status: 200, body: { status: 'accepted' } });
    // GitLab sends the same webhook-id again on a retry or a Resend, whatever else changed.
    const again = JSON.stringify({ ...fixture, project_id: 7, build_id: 2003, build_status: 'running', build_name: 'resent' });
    expect(await post(t, again, { ...headers, 'webhook-signature': sign(id, now, again) })).toEqual({ status: 200, body: { status: 'duplicate' } });
    const wrong = await post(t, body, {
      ...headers,
      'webhook-id': `msg_${randomUUID()}`,
      'webhook-signature': sign(id, now, body, Buffer.from('another key, of 32 bytes or so..').toString('base64')),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatch(/signature was refused/);
    const staleId = `msg_${randomUUID()}`;
    const stale = await post(t, body, { 'webhook-id': staleId, 'webhook-timestamp': String(now - 360), 'webhook-signature': sign(staleId, now - 360, body) });
    expect(stale.status).toBe(401);
    expect(stale.body.error).toMatch(/timestamp/i);
    // A signed delivery's X-Gitlab-Token does not stand in for its signature.
    expect((await post(t, body, { ...headers, 'webhook-id': staleId, 'webhook-signature': 'v1,AAAA', 'x-gitlab-token': SECRET })).status).toBe(401);
    // An instance without signing sends X-Gitlab-Token alone: still accepted; neither is refused.
    const plain = JSON.stringify({ ...fixture, project_id: 7, build_id: 2003, build_status: 'pending' });
    expect((await post(t, plain, { 'x-gitlab-token': SECRET })).status).toBe(200);
    expect((await post(t, plain, {})).status).toBe(401);
  });

  it('registers the receiver with the signing token where GitLab keeps it, and GitLab’s signed deliveries are accepted', async () => {
    const registered = await t.gql<{ jobStatusWebhookRegister: { errors: unknown[] } }>(
      'mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }',
    );
    expect(registered.data?.jobStatusWebhookRegister.errors).toEqual([]);
    const hooks = (await (await fetch(`${t.sandbox.url}/api/v4/projects/7/hooks`, { headers: { 'private-token': 'demo-token' } })).json()) as Record<
      string,
      unknown
    >[];
    // Signed deliveries carry no shared token at all.
    expect(hooks.find((h) => String(h.url).endsWith('/webhooks/gitlab'))).toMatchObject({ signing_token_present: true, token_present: false });
    t.sandbox.advance(STEP_MS);
    await t.sandbox.flushDeliveries();
    const deliveries = t.sandbox.deliveries.filter((d) => d.projectId === 7);
    expect(deliveries.length).toBeGreaterThan(0);
    for (const delivery of deliveries) {
      expect(delivery.headers['webhook-signature']).toMatch(/^v1,/);
      expect(delivery.headers['X-Gitlab-Token']).toBeUndefined();
      expect(delivery.status).toBe(200);
    }
  });

  it('keeps X-Gitlab-Token on a hook where GitLab ignored the signing token (before 19.0)', async () => {
    const registered = await legacy.gql<{ jobStatusWebhookRegister: { errors: unknown[] } }>(
      'mutation { jobStatusWebhookRegister(input: { projectId: "demo/playground" }) { errors { message } } }',
    );
    expect(registered.data?.jobStatusWebhookRegister.errors).toEqual([]);
    legacy.sandbox.advance(STEP_MS);
    await legacy.sandbox.flushDeliveries();
    const deliveries = legacy.sandbox.deliveries.filter((d) => d.projectId === 7);
    expect(deliveries.length).toBeGreaterThan(0);
    for (const delivery of deliveries) {
      expect(delivery.headers['webhook-signature']).toBeUndefined();
      expect(delivery.headers['X-Gitlab-Token']).toBe(SECRET);
      expect(delivery.status).toBe(200);
    }
  });
});
