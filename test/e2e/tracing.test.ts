/**
 * OpenTelemetry traces from the built gateway (dist/), configured only by the
 * standard OTEL_* variables, exported to a real OTLP/HTTP receiver on
 * loopback that decodes what the exporter sends (protobuf, the default, and
 * JSON). Asserts the spans, their parent links from the caller's
 * `traceparent` down to the trace context GitLab receives, subscriptions
 * traced per event, and that no credential, token or variable value is in
 * anything exported.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { type GitlabSandbox, startGitlabSandbox } from '../../src/sandbox/gitlab/server.js';
import { type HubzillaSandbox, startHubzillaSandbox } from '../../src/sandbox/hubzilla/server.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { waitForOutput } from '../helpers/processes.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const HOOK_SECRET = 'hook-secret-5f2c9a71d04e';
const COLLECTOR_KEY = 'collector-key-93be1c0a77';

interface Gateway {
  url: string;
  child: ChildProcess;
  logFile: string;
}

const dir = mkdtempSync(join(tmpdir(), 'duograph-tracing-'));
let receiver: OtlpReceiver;
let gitlab: GitlabSandbox;
let hubzilla: HubzillaSandbox;
let gateway: Gateway;

async function startGateway(env: Record<string, string>, name: string): Promise<Gateway> {
  const logFile = join(dir, `${name}.log`);
  const child = spawn(process.execPath, ['dist/src/main.js', 'serve', '--port', '0', '--host', '127.0.0.1'], {
    env: {
      ...process.env,
      GITLAB_URL: gitlab.url,
      HUBZILLA_URL: hubzilla.url,
      LOG_FILE: logFile,
      LOG_LEVEL: 'debug',
      POLL_INTERVAL_MS: '100',
      UPSTREAM_RETRY_BASE_MS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      // Every call goes out, so each request's spans are its own; the cache's spans have a gateway of their own.
      CACHE_MAX_AGE_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const match = await waitForOutput(child, /GraphiQL at (\S+)/, name);
  return { url: match[1] ?? '', child, logFile };
}

async function stop(g: Gateway | undefined): Promise<void> {
  if (!g || g.child.exitCode !== null) return;
  const exited = new Promise((resolve) => g.child.once('exit', resolve));
  g.child.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  gitlab = await startGitlabSandbox({});
  hubzilla = await startHubzillaSandbox({});
  gateway = await startGateway(
    {
      OTEL_SERVICE_NAME: 'duograph-e2e',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}`,
      TRACE_RESOLVERS: 'Project.jobs',
    },
    'protobuf',
  );
}, 60_000);
afterAll(async () => {
  await stop(gateway);
  await receiver?.close();
  await gitlab?.close();
  await hubzilla?.close();
  rmSync(dir, { recursive: true, force: true });
});

function traceparent(sampled = true): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-${sampled ? '01' : '00'}`, traceId, parentId };
}

async function post(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<{ data?: unknown; errors?: unknown[] }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': 'demo-token', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: unknown; errors?: unknown[] };
}

/** The spans of one trace, once its SERVER span (the last to end) has arrived. */
async function traceOf(traceId: string): Promise<ReceivedSpan[]> {
  await receiver.waitFor((spans) => spans.some((s) => s.traceId === traceId && s.kind === SERVER));
  return receiver.spans.filter((s) => s.traceId === traceId);
}

const one = (spans: ReceivedSpan[], predicate: (s: ReceivedSpan) => boolean): ReceivedSpan => {
  const found = spans.filter(predicate);
  expect(found).toHaveLength(1);
  return found[0] as ReceivedSpan;
};

describe('OpenTelemetry traces over OTLP/HTTP (protobuf)', () => {
  it("continues the caller's trace: request, operation, resolver and upstream spans, and GitLab gets each call's own context", async () => {
    gitlab.clearRequests();
    const caller = traceparent();
    const result = await post(
      gateway.url,
      'query ProjectJobs($path: String!) { project(fullPath: $path) { name jobs(first: 3) { nodes { name } } } }',
      { path: 'platform/core' },
      { traceparent: caller.header, 'x-request-id': 'trace-e2e-1' },
    );
    expect(result.errors).toBeUndefined();
    const spans = await traceOf(caller.traceId);

    const server = one(spans, (s) => s.kind === SERVER);
    expect(server).toMatchObject({
      name: 'POST /graphql',
      parentSpanId: caller.parentId,
      attributes: { 'http.request.method': 'POST', 'http.route': '/graphql', 'http.response.status_code': 200, 'duograph.request_id': 'trace-e2e-1' },
      resource: { 'service.name': 'duograph-e2e', 'deployment.environment': 'test' },
    });
    const operation = one(spans, (s) => s.name === 'query ProjectJobs');
    expect(operation.parentSpanId).toBe(server.spanId);
    expect(operation.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'ProjectJobs', 'duograph.outcome': 'success' });
    expect(operation.attributes['duograph.cost.estimate']).toBeGreaterThan(0);
    const resolver = one(spans, (s) => s.name === 'resolve Project.jobs');
    expect(resolver.parentSpanId).toBe(operation.spanId);
    // Only the fields asked for get resolver spans.
    expect(spans.filter((s) => s.name.startsWith('resolve ')).map((s) => s.name)).toEqual(['resolve Project.jobs']);

    const upstream = spans.filter((s) => s.kind === CLIENT);
    const received = gitlab.requests.filter((r) => r.headers['x-request-id'] === 'trace-e2e-1');
    expect(upstream).toHaveLength(received.length);
    for (const span of upstream) {
      expect(span.attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.response.status_code': 200,
        'duograph.upstream': 'gitlab',
        'duograph.upstream.breaker': 'closed',
      });
      expect(span.attributes['http.response.body.size']).toBeGreaterThan(0);
      // The call GitLab received carries this span as its parent, and answered with the correlation id the span records.
      const call = received.find((r) => r.headers.traceparent === `00-${caller.traceId}-${span.spanId}-01`);
      expect(call, span.name).toBeDefined();
      expect(span.attributes['duograph.upstream.request_id']).toBe(call?.responseRequestId);
    }
    const jobsCall = one(upstream, (s) => s.attributes['url.template'] === '/projects/:param/jobs');
    expect(jobsCall.parentSpanId).toBe(resolver.spanId);
    expect(jobsCall.name).toBe('GET /projects/:param/jobs');
    const projectCall = one(upstream, (s) => s.attributes['url.template'] === '/projects/:param');
    expect(projectCall.parentSpanId).toBe(operation.spanId);

    // Log lines of the request name its trace.
    const lines = readFileSync(gateway.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"requestId":"trace-e2e-1"'));
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines.filter((l) => l.includes('upstream call'))) expect(line).toContain(`"traceId":"${caller.traceId}"`);
  });

  it("follows the caller's decision not to sample: nothing exported, and the upstreams still get the trace context", async () => {
    gitlab.clearRequests();
    const caller = traceparent(false);
    await post(gateway.url, '{ project(fullPath: "platform/core") { name } }', {}, { traceparent: caller.header });
    const marker = traceparent();
    await post(gateway.url, '{ project(fullPath: "platform/core") { name } }', {}, { traceparent: marker.header });
    await traceOf(marker.traceId);
    expect(receiver.spans.filter((s) => s.traceId === caller.traceId)).toEqual([]);
    expect(gitlab.requests[0]?.headers.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-00$`));
  });

  it('marks a failing upstream call and the operation, with retries counted, and without what GitLab wrote', async () => {
    gitlab.addFault({ path: /^\/api\/v4\/projects\/platform%2Fcore$/, status: 503, body: '{"message":"internal detail 7731"}', times: 3 });
    const caller = traceparent();
    const result = await post(gateway.url, 'query Failing { project(fullPath: "platform/core") { name } }', {}, { traceparent: caller.header });
    expect(result.errors).toHaveLength(1);
    const spans = await traceOf(caller.traceId);
    const call = one(spans, (s) => s.kind === CLIENT);
    expect(call.attributes).toMatchObject({ 'http.response.status_code': 503, 'http.request.resend_count': 2 });
    expect(call.status.code).toBe(ERROR);
    const operation = one(spans, (s) => s.name === 'query Failing');
    expect(operation.attributes).toMatchObject({ 'duograph.outcome': 'partial', 'graphql.error.codes': ['UPSTREAM_ERROR'] });
    expect(JSON.stringify(spans)).not.toContain('internal detail 7731');
  });

  it('traces an operation the limits refuse before it runs: its span says why and what it was estimated to cost, and nothing goes upstream', async () => {
    gitlab.clearRequests();
    const caller = traceparent();
    const result = await post(
      gateway.url,
      'query TooLarge { projects(first: 100) { nodes { jobs(first: 100) { nodes { project { forkedFrom { name } } } } } } }',
      {},
      { traceparent: caller.header },
    );
    expect(result.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', cost: { estimated: 20101, limit: 2000 } } })]);
    const spans = await traceOf(caller.traceId);
    const operation = one(spans, (s) => s.name === 'query TooLarge');
    expect(operation.attributes).toMatchObject({ 'duograph.outcome': 'error', 'graphql.error.codes': ['BAD_USER_INPUT'], 'duograph.cost.estimate': 20101 });
    expect(operation.status.code).toBe(ERROR);
    expect(spans.filter((s) => s.kind === CLIENT)).toEqual([]);
    expect(gitlab.requests).toEqual([]);
  });

  it("traces each subscription event delivered under the subscription's span", async () => {
    const client = createClient({
      url: gateway.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { 'Private-Token': 'demo-token' },
      retryAttempts: 0,
    });
    const events: unknown[] = [];
    try {
      for await (const event of client.iterate({
        query: 'subscription FollowLog { jobLogAppended(projectId: "platform/core", jobId: "1002") { text complete } }',
      })) {
        events.push(event);
        if ((event.data as { jobLogAppended?: { complete?: boolean } } | undefined)?.jobLogAppended?.complete) break;
      }
    } finally {
      await client.dispose();
    }
    const spans = await receiver.waitFor((all) => all.filter((s) => s.name === 'subscription FollowLog event').length === events.length);
    const subscription = one(spans, (s) => s.name === 'subscription FollowLog');
    expect(subscription.attributes).toMatchObject({ 'graphql.operation.type': 'subscription', 'duograph.outcome': 'subscribed' });
    const delivered = spans.filter((s) => s.name === 'subscription FollowLog event');
    // One span per event delivered (a finished job's log may come whole in one chunk).
    expect(delivered.length).toBe(events.length);
    expect(delivered.length).toBeGreaterThan(0);
    for (const [index, span] of delivered.entries()) {
      expect(span.parentSpanId).toBe(subscription.spanId);
      expect(span.traceId).toBe(subscription.traceId);
      expect(span.attributes).toMatchObject({ 'duograph.outcome': 'success', 'duograph.event.index': index + 1 });
    }
  });

  it('exports no credential, token or variable value, and sends the collector its headers only', async () => {
    const caller = traceparent();
    const result = await post(
      gateway.url,
      'mutation AddHook($input: ProjectHookCreateInput!) { projectHookCreate(input: $input) { hook { url } errors { message } } }',
      { input: { projectId: 'platform/core', url: 'https://hooks.example.com/in?key=variable-value-1b2c', token: HOOK_SECRET } },
      { traceparent: caller.header, authorization: 'Bearer glpat-bearer-0f3e9a8c' },
    );
    expect(result.errors).toBeUndefined();
    await traceOf(caller.traceId);
    await receiver.waitFor((spans) => spans.some((s) => s.name === 'subscription FollowLog event'));
    const exported = receiver.exports.map((e) => e.raw).join('\n');
    for (const secret of [
      'demo-token',
      'glpat-bearer-0f3e9a8c',
      HOOK_SECRET,
      'variable-value-1b2c',
      'hooks.example.com',
      'platform/core',
      'platform%2Fcore',
      COLLECTOR_KEY,
    ]) {
      expect(exported).not.toContain(secret);
    }
    expect(receiver.exports.every((e) => e.headers['x-collector-key'] === COLLECTOR_KEY)).toBe(true);
    expect(receiver.exports[0]?.contentType).toBe('application/x-protobuf');
    expect(readFileSync(gateway.logFile, 'utf8')).not.toContain(COLLECTOR_KEY);
  });

  it('scrubs what the caller and GitLab name in spans: a token-shaped request id is replaced, operation names and GitLab request ids scrubbed', async () => {
    const caller = traceparent();
    const givenId = 'glpat-REQUESTID0123456789abcdef';
    const gitlabId = 'glpat-UPSTREAMID0123456789abcdef';
    const name = `Q${'aB3xY7'.repeat(8)}`;
    gitlab.addFault({
      path: '/api/v4/projects/5',
      status: 200,
      body: JSON.stringify({ id: 5, name: 'Website' }),
      headers: { 'X-Request-Id': gitlabId },
      times: 1,
    });
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'private-token': 'demo-token', traceparent: caller.header, 'x-request-id': givenId },
      body: JSON.stringify({ query: `query ${name} { project(id: "5") { name } }` }),
    });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(((await response.json()) as { data?: unknown }).data).toEqual({ project: { name: 'Website' } });
    const spans = await traceOf(caller.traceId);
    expect(spans.some((s) => s.name === 'query [Redacted]')).toBe(true);
    expect(spans.some((s) => s.attributes['duograph.upstream.request_id'] === '[Redacted]')).toBe(true);
    const exported = receiver.exports.map((e) => e.raw).join('\n');
    for (const secret of [givenId, gitlabId, name]) expect(exported).not.toContain(secret);
    expect(gitlab.requests.some((r) => r.headers['x-request-id'] === givenId)).toBe(false);
  });

  it('leaves probes and scrapes untraced', async () => {
    const before = receiver.spans.length;
    await fetch(new URL('/healthz', gateway.url));
    await fetch(new URL('/metrics', gateway.url));
    const marker = traceparent();
    await post(gateway.url, '{ project(fullPath: "platform/core") { name } }', {}, { traceparent: marker.header });
    await traceOf(marker.traceId);
    expect(receiver.spans.slice(before).filter((s) => s.traceId !== marker.traceId)).toEqual([]);
  });
});

describe('OpenTelemetry traces over OTLP/HTTP (JSON)', () => {
  let json: Gateway | undefined;
  afterAll(() => stop(json));

  it('exports the same spans as JSON when OTEL_EXPORTER_OTLP_PROTOCOL is http/json, and starts traces of its own without a caller', async () => {
    json = await startGateway({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'duograph-json' }, 'json');
    const count = receiver.exports.length;
    await post(json.url, 'query Plain { project(fullPath: "platform/core") { name } }', {}, {});
    const spans = await receiver.waitFor((all) => all.some((s) => s.resource['service.name'] === 'duograph-json' && s.kind === SERVER));
    const mine = spans.filter((s) => s.resource['service.name'] === 'duograph-json');
    const server = one(mine, (s) => s.kind === SERVER);
    expect(server.parentSpanId).toBe('');
    const operation = one(mine, (s) => s.name === 'query Plain');
    expect(operation.parentSpanId).toBe(server.spanId);
    expect(one(mine, (s) => s.kind === CLIENT).parentSpanId).toBe(operation.spanId);
    expect(receiver.exports.slice(count).every((e) => e.contentType.startsWith('application/json'))).toBe(true);
  });

  it('keeps serving when the collector is out of reach, says so once with the cause, and nothing of its headers', async () => {
    const lost = await startGateway(
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}`, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' },
      'lost-collector',
    );
    try {
      for (let i = 0; i < 3; i++) {
        const result = await post(lost.url, '{ project(fullPath: "platform/core") { name } }', {}, {});
        expect(result).toEqual({ data: { project: { name: 'Core' } } });
        // Past a batch delay, so that exports are tried and fail in between.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Exports fail at each batch; the operator hears of it once.
      await vi.waitFor(() => expect(readFileSync(lost.logFile, 'utf8')).toContain('did not take spans'), { timeout: 15_000 });
    } finally {
      await stop(lost);
    }
    const log = readFileSync(lost.logFile, 'utf8');
    expect(log).not.toContain(COLLECTOR_KEY);
    const reports = log.split('\n').filter((line) => line.includes('did not take spans'));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain('traces: the collector at 127.0.0.1:9 did not take spans (ECONNREFUSED)');
  });

  it('marks an answer from the cache on its span, and links the requests a shared read served', async () => {
    const cached = await startGateway({ CACHE_MAX_AGE_MS: '600000', OTEL_SERVICE_NAME: 'duograph-cache' }, 'cache');
    try {
      const path = '/api/v4/projects/demo%2Fplayground';
      const query = '{ project(fullPath: "demo/playground") { name } }';
      let open = () => {};
      gitlab.addFault({ method: 'GET', path, until: new Promise<void>((resolve) => (open = resolve)), times: 1 });
      const joined = async () => {
        const text = await (await fetch(new URL('/metrics', cached.url))).text();
        return Number(/^duograph_upstream_cache_lookups_total\{[^}]*outcome="joined"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
      };
      const [first, second, third] = [traceparent(), traceparent(), traceparent()];
      const before = gitlab.requests.filter((r) => r.path === path).length;
      const leading = post(cached.url, query, {}, { traceparent: first.header });
      await vi.waitFor(() => expect(gitlab.requests.filter((r) => r.path === path).length).toBe(before + 1));
      const joining = post(cached.url, query, {}, { traceparent: second.header });
      await vi.waitFor(async () => expect(await joined()).toBe(1));
      open();
      for (const answer of await Promise.all([leading, joining])) expect(answer).toEqual({ data: { project: { name: 'Playground' } } });
      const call = one(await traceOf(first.traceId), (s) => s.kind === CLIENT);
      expect(call.attributes).toMatchObject({ 'duograph.cache': 'miss', 'http.response.status_code': 200 });
      expect(call.links.map((link) => link.traceId)).toEqual([second.traceId]);
      // The joined request has no call of its own.
      expect((await traceOf(second.traceId)).filter((s) => s.kind === CLIENT)).toEqual([]);

      // Another operation over the same project (not the leading one's kept whole answer): a hit on the stored upstream answer.
      const aliased = '{ playground: project(fullPath: "demo/playground") { name } }';
      expect(await post(cached.url, aliased, {}, { traceparent: third.header })).toEqual({ data: { playground: { name: 'Playground' } } });
      const hit = one(await traceOf(third.traceId), (s) => s.kind === CLIENT);
      expect(hit.attributes).toMatchObject({ 'duograph.cache': 'hit', 'http.response.status_code': 200, 'url.template': '/projects/:param' });
      // The leading operation again: its kept answer, served without running it, reads nothing at all.
      const fourth = traceparent();
      expect(await post(cached.url, query, {}, { traceparent: fourth.header })).toEqual({ data: { project: { name: 'Playground' } } });
      expect((await traceOf(fourth.traceId)).filter((s) => s.kind === CLIENT)).toEqual([]);
      expect(gitlab.requests.filter((r) => r.path === path).length).toBe(before + 1);
    } finally {
      await stop(cached);
    }
  });

  it('samples a request whole or not at all: a sampled one has every span, one not sampled none, and GitLab sees which', async () => {
    const sampled = await startGateway({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5', OTEL_SERVICE_NAME: 'duograph-ratio' }, 'ratio');
    try {
      gitlab.clearRequests();
      const ids = Array.from({ length: 24 }, (_, i) => `ratio-${i}`);
      for (const id of ids) {
        const result = await post(sampled.url, 'query Sampled { project(fullPath: "platform/core") { name forkedFrom { name } } }', {}, { 'x-request-id': id });
        expect(result.errors).toBeUndefined();
      }
      // The trace context each request sent GitLab: its trace id, and whether it was sampled.
      const traces = ids.map((id) => {
        const calls = gitlab.requests.filter((r) => r.headers['x-request-id'] === id);
        // Each call has a parent id of its own when sampled; the trace id and the flags are the request's.
        const contexts = new Set(calls.map((r) => r.headers.traceparent?.replace(/^00-([0-9a-f]{32})-[0-9a-f]{16}-(0[01])$/, '$1 $2')));
        expect(contexts.size).toBe(1);
        const [traceId = '', flags] = [...contexts][0]?.split(' ') ?? [];
        expect(traceId).toMatch(/^[0-9a-f]{32}$/);
        return { traceId, sampled: flags === '01', calls: calls.length };
      });
      const kept = traces.filter((t) => t.sampled);
      // 0.5 of 24: both kinds, unless 24 coins all fell alike (1 in 8 million).
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(traces.length);
      await receiver.waitFor((all) => kept.every((t) => all.some((s) => s.traceId === t.traceId && s.kind === SERVER)));
      const mine = receiver.spans.filter((s) => s.resource['service.name'] === 'duograph-ratio');
      for (const t of traces) {
        const spans = mine.filter((s) => s.traceId === t.traceId);
        if (!t.sampled) {
          expect(spans).toEqual([]);
          continue;
        }
        const operation = one(spans, (s) => s.name === 'query Sampled');
        expect(one(spans, (s) => s.kind === SERVER).spanId).toBe(operation.parentSpanId);
        const calls = spans.filter((s) => s.kind === CLIENT);
        expect(calls).toHaveLength(t.calls);
        for (const call of calls) expect(call.parentSpanId).toBe(operation.spanId);
      }
    } finally {
      await stop(sampled);
    }
  });

  it('refuses to start when TRACE_RESOLVERS names a field the schema does not have', async () => {
    await expect(startGateway({ TRACE_RESOLVERS: 'Project.jobs,Project.nope' }, 'bad-resolvers')).rejects.toThrow(
      /duograph: cannot start: TRACE_RESOLVERS names Project\.nope, which the schema does not have/,
    );
    // A process that loads the whole gateway before it refuses: a bound a loaded machine can meet.
  }, 120_000);
});
