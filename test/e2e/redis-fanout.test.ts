/**
 * Two gateway processes sharing a real redis-server: a webhook received by
 * one reaches a graphql-ws subscriber connected to the other, a redelivery
 * to the other is recognised, and the Redis channel subscription goes away
 * with the last subscriber. Skipped (with a message) when redis-server is
 * not installed, except under CI, where it fails instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startRedis, waitForOutput } from '../helpers/processes.js';
import { startGitlabSandbox, STEP_MS, type GitlabSandbox } from '../../src/sandbox/gitlab/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'fanout-webhook-secret-0123456789';
const hasRedis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;

if (!hasRedis && process.env.CI) {
  throw new Error('redis-server is not on PATH, and CI requires the Redis fan-out test (apt-get install -y redis-server).');
}
if (!hasRedis) console.warn('Skipping the Redis fan-out test: redis-server is not on PATH (apt-get install -y redis-server).');

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface Gateway {
  child: ChildProcess;
  url: string;
  webhookUrl: string;
}

async function startGateway(gitlabUrl: string, redisUrl: string): Promise<Gateway> {
  const child = spawn(process.execPath, ['dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: root,
    env: {
      ...process.env,
      GITLAB_URL: gitlabUrl,
      REDIS_URL: redisUrl,
      GITLAB_WEBHOOK_SECRET: SECRET,
      POLL_INTERVAL_MS: '600000',
      POLL_MAX_INTERVAL_MS: '600000',
    },
  });
  const match = await waitForOutput(child, /GraphiQL at (\S+)[\s\S]*Webhook receiver: (\S+)/, 'gateway');
  return { child, url: match[1] ?? '', webhookUrl: match[2] ?? '' };
}

describe.skipIf(!hasRedis)('Redis fan-out across two gateway instances', () => {
  let redis: ChildProcess | undefined;
  let redisUrl = '';
  let sandbox: GitlabSandbox;
  let a: Gateway | undefined;
  let b: Gateway | undefined;
  let inspector: Redis;

  beforeAll(async () => {
    ({ child: redis, url: redisUrl } = await startRedis());
    inspector = new Redis(redisUrl);
    sandbox = await startGitlabSandbox({ clock: 'manual' });
    [a, b] = await Promise.all([startGateway(sandbox.url, redisUrl), startGateway(sandbox.url, redisUrl)]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([stop(a?.child), stop(b?.child)]);
    inspector?.disconnect();
    await sandbox?.close();
    await stop(redis);
  });

  async function gql(gateway: Gateway, query: string): Promise<Record<string, unknown>> {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token' },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as Record<string, unknown>;
  }

  function postWebhook(gateway: Gateway, body: string, idempotencyKey: string) {
    return fetch(gateway.webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Job Hook', 'idempotency-key': idempotencyKey },
      body,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown }));
  }

  it('delivers a webhook received by one instance to a subscriber of the other', async () => {
    if (!a || !b) throw new Error('gateways did not start');
    const client = createClient({
      url: b.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { 'Private-Token': 'demo-token' },
      retryAttempts: 0,
    });
    const sub = client.iterate({ query: 'subscription { jobStatusUpdated(projectId: "7", pipelineId: "202") { restId status } }' });
    const next = async () => ((await sub.next()).value as { data: { jobStatusUpdated: { restId: number; status: string } } }).data.jobStatusUpdated;
    const initial = [await next(), await next(), await next()];
    expect(initial.map((j) => `${j.restId}:${j.status}`)).toEqual(['2003:RUNNING', '2004:CREATED', '2005:CREATED']);
    await vi.waitFor(async () => expect(await inspector.pubsub('NUMSUB', 'gitlab:jobs:7')).toEqual(['gitlab:jobs:7', 1]));

    // The sandbox posts its webhooks to instance A only.
    const registered = await gql(a, 'mutation { jobStatusWebhookRegister(input: { projectId: "7" }) { hook { url } errors { message } } }');
    expect(registered).toEqual({ data: { jobStatusWebhookRegister: { hook: { url: a.webhookUrl }, errors: [] } } });
    sandbox.advance(STEP_MS);
    await sandbox.flushDeliveries();
    expect(sandbox.deliveries.length).toBeGreaterThan(0);
    expect(sandbox.deliveries.every((d) => d.url === a?.webhookUrl && d.status === 200)).toBe(true);
    const changed = [await next(), await next(), await next()];
    expect(changed.map((j) => `${j.restId}:${j.status}`).sort()).toEqual(['2003:FAILED', '2004:SKIPPED', '2005:SKIPPED']);

    // A hand-posted event to A, and its redelivery to B (same Idempotency-Key): one event.
    const payload = JSON.parse(readFileSync(new URL('../fixtures/gitlab-webhooks/job_event.payload.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const event = JSON.stringify({ ...payload, project_id: 7, build_id: 2005, pipeline_id: 202, build_status: 'canceled' });
    expect(await postWebhook(a, event, 'fanout-1')).toEqual({ status: 200, body: { status: 'accepted' } });
    expect(await postWebhook(b, event, 'fanout-1')).toEqual({ status: 200, body: { status: 'duplicate' } });
    expect(await next()).toEqual({ restId: 2005, status: 'CANCELED' });

    await sub.return?.();
    await client.dispose();
    // No Redis subscription outlives the last subscriber.
    await vi.waitFor(async () => expect(await inspector.pubsub('NUMSUB', 'gitlab:jobs:7')).toEqual(['gitlab:jobs:7', 0]));
    // Only the answer cache's and the rate gate's channels, which every instance listens to for its whole life.
    expect(((await inspector.pubsub('CHANNELS', '*')) as string[]).sort()).toEqual(['duograph:cache', 'duograph:rate']);
  });
});
