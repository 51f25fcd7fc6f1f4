/**
 * What operators run the gateway with: /healthz and /readyz, Prometheus
 * /metrics (operations, upstream calls, subscriptions; never a credential
 * in a label), JSON logs with every credential redacted, and @defer.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

const PROBE_TOKEN = 'log_redaction_probe_token';
const PROBE_BASIC = `Basic ${Buffer.from('demo:probe-pass-7731').toString('base64')}`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ sandbox: { clock: 'manual' }, env: { POLL_INTERVAL_MS: '20', POLL_MAX_INTERVAL_MS: '40' } });
});
afterAll(() => t.close());

async function get(path: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(new URL(path, t.url));
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
}

const metric = (text: string, name: string, labels: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('health and readiness', () => {
  it.each(['/', '/graphq', '/api/v4/projects'])('answers %s with a 404 that says where GraphQL is', async (path) => {
    const answer = await get(path);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ errors: [{ message: 'Nothing here. GraphQL is at /graphql (GraphiQL, in a browser).' }] });
  });

  it('answers /healthz while the process is up', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });

  it('answers /readyz with each upstream reachable and its latency', async () => {
    const { status, body } = await get('/readyz');
    expect(status).toBe(200);
    const ready = JSON.parse(body) as { status: string; upstreams: Record<string, { reachable: boolean; status: number; latencyMs: number }> };
    expect(ready.status).toBe('ready');
    expect(Object.keys(ready.upstreams).sort()).toEqual(['gitlab', 'hubzilla']);
    for (const upstream of Object.values(ready.upstreams)) {
      expect(upstream).toMatchObject({ reachable: true, status: expect.any(Number) });
      expect(upstream.latencyMs).toBeGreaterThanOrEqual(0);
    }
  });

  it("holds back no caller when GitLab throttles /readyz's look at it: the probe is outside every budget and teaches none", async () => {
    const own = await createTestApp({ sandbox: { clock: 'manual' } });
    try {
      // GitLab throttles the gateway's address after a few unauthenticated calls (the probes carry no credentials).
      own.sandbox.setRateLimit(3);
      let answered = 0;
      while (answered !== 429) {
        const body = (await (await fetch(new URL('/readyz', own.url))).json()) as { upstreams: { gitlab: { status: number } } };
        answered = body.upstreams.gitlab.status;
      }
      // A caller whose token the gateway has not seen yet (counted as anonymous until GitLab names its user) is not held back.
      const res = await own.gql<{ project: { name: string } }>('{ project(fullPath: "platform/core") { name } }');
      expect(res.errors).toBeUndefined();
      expect(res.data?.project.name).toBe('Core');
      const metrics = await (await fetch(new URL('/metrics', own.url))).text();
      expect(/^duograph_upstream_rate_limited_scopes (\d+)/m.exec(metrics)?.[1]).toBe('0');
      // Nor are the probes counted as the callers' upstream calls.
      expect(metrics).not.toMatch(/duograph_upstream_requests_total\{[^}]*route="\/version"/);
    } finally {
      await own.close();
    }
  });

  it('answers /readyz with 503 naming the upstream that cannot be reached', async () => {
    const down = await createTestApp({ gitlabUrl: new URL('http://127.0.0.1:9/'), env: { UPSTREAM_RETRIES: '0' } });
    try {
      const response = await fetch(new URL('/readyz', down.url));
      expect(response.status).toBe(503);
      const body = (await response.json()) as { status: string; upstreams: Record<string, { reachable: boolean; error?: string }> };
      expect(body.status).toBe('not ready');
      expect(body.upstreams.gitlab).toMatchObject({ reachable: false, error: 'UPSTREAM_UNAVAILABLE' });
      expect(body.upstreams.hubzilla?.reachable).toBe(true);
    } finally {
      await down.close();
    }
  });

  it('answers /readyz with 503 when GitLab answers 404 where its API was configured (a base URL with a wrong path)', async () => {
    // The sandbox answers, but not under /elsewhere/api/v4: every call would miss.
    const wrong = await createTestApp({ gitlabUrl: new URL(`${t.sandbox.url}/elsewhere`), env: { UPSTREAM_RETRIES: '0' } });
    try {
      const response = await fetch(new URL('/readyz', wrong.url));
      expect(response.status).toBe(503);
      const body = (await response.json()) as { upstreams: Record<string, { reachable: boolean; status: number | null; error?: string }> };
      expect(body.upstreams.gitlab).toMatchObject({ reachable: false, status: 404, error: 'API_NOT_FOUND' });
    } finally {
      await wrong.close();
    }
  });
});

describe('Prometheus metrics', () => {
  it('counts operations by name and outcome, and upstream calls by route template and status, with latency histograms', async () => {
    await t.gql('query ProjectName { project(fullPath: "platform/core") { name } }');
    t.sandbox.addFault({ method: 'GET', path: '/api/v4/projects/platform%2Finfra', status: 500, times: 10 });
    await t.gql('query Failing { project(fullPath: "platform/infra") { name } }');
    t.sandbox.clearFaults();
    await t.gql('query Broken { nope }');
    const { status, body, type } = await get('/metrics');
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metric(body, 'duograph_graphql_operations_total', 'operation_name="ProjectName",operation_type="query",outcome="success"')).toBe(1);
    expect(metric(body, 'duograph_graphql_operations_total', 'operation_name="Failing",operation_type="query",outcome="partial"')).toBe(1);
    expect(metric(body, 'duograph_graphql_operation_duration_seconds_count', 'operation_name="ProjectName",operation_type="query",outcome="success"')).toBe(1);
    expect(
      metric(body, 'duograph_graphql_operation_duration_seconds_bucket', 'le="+Inf",operation_name="ProjectName",operation_type="query",outcome="success"'),
    ).toBe(1);
    // A document that does not validate never executes: it is not an operation.
    expect(body).not.toContain('operation_name="Broken"');
    expect(metric(body, 'duograph_upstream_requests_total', 'upstream="gitlab",method="GET",route="/projects/:param",status="200"')).toBeGreaterThanOrEqual(1);
    expect(metric(body, 'duograph_upstream_requests_total', 'upstream="gitlab",method="GET",route="/projects/:param",status="500"')).toBeGreaterThanOrEqual(1);
    expect(
      metric(body, 'duograph_upstream_request_duration_seconds_count', 'upstream="gitlab",method="GET",route="/projects/:param",status="200"'),
    ).toBeGreaterThanOrEqual(1);
    // Route templates only: no project path, id or query string in any label.
    expect(body).not.toMatch(/route="[^"]*(platform|infra|\d)[^"]*"/);
  });

  it('counts active subscriptions and WebSocket connections', async () => {
    const client = createWsClient({
      url: t.url.href.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { 'Private-Token': 'demo-token' },
      retryAttempts: 0,
    });
    const iterator = client.iterate({ query: 'subscription Watch { jobStatusUpdated(projectId: "1", jobId: "1014") { status } }' });
    expect((await iterator.next()).value).toEqual({ data: { jobStatusUpdated: { status: 'PENDING' } } });
    let text = (await get('/metrics')).body;
    expect(text).toMatch(/^duograph_subscriptions_active 1$/m);
    expect(text).toMatch(/^duograph_websocket_connections 1$/m);
    await iterator.return?.();
    await client.dispose();
    await vi.waitFor(async () => {
      text = (await get('/metrics')).body;
      expect(text).toMatch(/^duograph_subscriptions_active 0$/m);
      expect(text).toMatch(/^duograph_websocket_connections 0$/m);
    });
    expect(metric(text, 'duograph_graphql_operations_total', 'operation_name="Watch",operation_type="subscription",outcome="success"')).toBe(1);
  });

  it("never puts a credential in a label, even an operation named like the caller's token", async () => {
    await t.gql(`query ${PROBE_TOKEN} { __typename }`, {}, { token: PROBE_TOKEN });
    const { body } = await get('/metrics');
    expect(metric(body, 'duograph_graphql_operations_total', 'operation_name="redacted",operation_type="query",outcome="success"')).toBe(1);
    for (const secret of TEST_SECRETS) expect(body).not.toContain(secret);
  });
});

describe('logs', () => {
  it('writes JSON entries for requests with every credential redacted', async () => {
    const file = process.env.LOG_FILE;
    expect(file, 'test/global-setup.ts sets LOG_FILE').toBeTruthy();
    const probe = randomUUID();
    await fetch(new URL(`/graphql?private_token=${PROBE_TOKEN}&query=${encodeURIComponent('{ __typename }')}`, t.url), {
      headers: {
        'x-probe': probe,
        'graphql-preflight': '1',
        'private-token': PROBE_TOKEN,
        authorization: `Bearer ${PROBE_TOKEN}`,
        'job-token': PROBE_TOKEN,
        'x-hubzilla-authorization': PROBE_BASIC,
        cookie: `session=${PROBE_TOKEN}`,
        sudo: 'alice',
      },
    });
    const lines = readFileSync(file ?? '', 'utf8')
      .split('\n')
      .filter((l) => l.includes(probe));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] ?? '{}') as { level: number; msg: string; time: string; req: { url: string; headers: Record<string, string> } };
    expect(entry.msg).toBe('request received');
    expect(entry.req.headers).toMatchObject({
      'private-token': '[Redacted]',
      authorization: '[Redacted]',
      'job-token': '[Redacted]',
      'x-hubzilla-authorization': '[Redacted]',
      cookie: '[Redacted]',
      sudo: 'alice',
    });
    expect(entry.req.url).toContain('private_token=[Redacted]');
    expect(lines[0]).not.toContain(PROBE_TOKEN);
    expect(lines[0]).not.toContain(PROBE_BASIC.slice(6));
  });
});

describe('@defer', () => {
  it('sends a deferred slow field in a later part of a multipart response', async () => {
    const response = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'private-token': 'demo-token' },
      body: JSON.stringify({ query: '{ project(fullPath: "platform/core") { name ... @defer { languages { name } } } }' }),
    });
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    const text = await response.text();
    const parts = [...text.matchAll(/\r\n\r\n(\{.*\})\r\n/g)].map((m) => JSON.parse(m[1] ?? '{}') as Record<string, unknown>);
    expect(parts[0]).toEqual({ data: { project: { name: 'Core' } }, hasNext: true });
    expect(JSON.stringify(parts.slice(1))).toContain('"languages":[{"name":"Ruby"}');
    expect(parts.at(-1)?.hasNext).toBe(false);
  });
});
