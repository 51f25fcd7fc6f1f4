/**
 * `npm run bench:soak`: the gateway under a steady mix of queries, mutations
 * and subscriptions for a bounded time (default 10 minutes) while 5% of the
 * upstream calls meet a random fault (500, 502, 503, 504, 429 with
 * Retry-After, an HTML page with 200, a truncated or non-JSON body, a reset
 * connection, a response that never comes).
 *
 * Three processes on loopback: the upstreams (both sandboxes, whose fault
 * switches inject the faults: every 100 ms, one `times: 1` fault per twenty
 * requests served in the last tick), the gateway (its own memory and event
 * loop, reported over IPC), and this one, the load. Reports requests served,
 * errors by code, the gateway's RSS at start and end, and its event-loop
 * delay p99; writes bench/results/soak.json.
 *
 *   npm run bench:soak                 # 10 minutes
 *   npm run bench:soak -- --minutes 1 --concurrency 8 --max-requests 1000000 --fault-rate 0.05 --upstream-timeout-ms 5000 --log-file /tmp/soak.log
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { startGitlabSandbox, type FaultRule } from '../src/sandbox/gitlab/server.js';
import { startHubzillaSandbox } from '../src/sandbox/hubzilla/server.js';
import { buildApp } from '../src/server/app.js';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'load' },
    minutes: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
    subscribers: { type: 'string', default: '20' },
    'max-requests': { type: 'string', default: '5000000' },
    'fault-rate': { type: 'string', default: '0.05' },
    gitlab: { type: 'string' },
    hubzilla: { type: 'string' },
    'log-file': { type: 'string' },
    'upstream-timeout-ms': { type: 'string', default: '5000' },
  },
});

const HUBZILLA_DEMO = `Basic ${Buffer.from('demo:demo-pass').toString('base64')}`;
const HUBZILLA_ALICE = `Basic ${Buffer.from('alice:alice-pass').toString('base64')}`;

/** The faults the upstream process draws from, each as a sandbox fault rule (any route, once). */
const FAULTS: { name: string; rule: Omit<FaultRule, 'times'> }[] = [
  { name: '500', rule: { status: 500 } },
  { name: '502', rule: { status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } } },
  { name: '503', rule: { status: 503 } },
  { name: '504', rule: { status: 504 } },
  { name: '429', rule: { status: 429, headers: { 'retry-after': '1' }, body: '{"message":"429 Too Many Requests"}' } },
  { name: 'html-200', rule: { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Maintenance</body></html>' } },
  { name: 'truncated', rule: { status: 200, headers: { 'content-length': '4096' }, body: '{"id": 1, "name": "Trunc' } },
  { name: 'not-json', rule: { status: 200, body: '{"id": 1, "name": ' } },
  { name: 'reset', rule: { reset: true } },
  { name: 'hang', rule: { hang: true } },
];

/** The upstreams: both sandboxes, with random faults on `rate` of their requests. */
async function upstreams(): Promise<void> {
  const rate = Number(values['fault-rate']);
  const gitlab = await startGitlabSandbox({ playStatus: 'pending' });
  const hubzilla = await startHubzillaSandbox();
  const injected: Record<string, number> = {};
  const pending = new Set<NodeJS.Timeout>();
  const carry = new Map<object, number>();
  let served = 0;
  const timer = setInterval(() => {
    for (const target of [gitlab, hubzilla]) {
      // Each sandbox gets `rate` faults per request it served in the last tick (it records every request: count and
      // drop them, so a long run keeps no history). Faults are armed at random moments of the tick, each hitting the
      // next request from then on: spread out as independent faults are, not a burst on the first requests of a tick,
      // and never piling up on an upstream that gets few requests (a breaker rightly reads either as an outage).
      const n = target.requests.length;
      served += n;
      target.clearRequests();
      target.clearFaults();
      let due = (carry.get(target) ?? 0) + n * rate;
      while (due >= 1) {
        due -= 1;
        const fault = FAULTS[Math.floor(Math.random() * FAULTS.length)] ?? (FAULTS[0] as (typeof FAULTS)[number]);
        const armed = setTimeout(() => {
          pending.delete(armed);
          target.addFault({ ...fault.rule, times: 1 });
          injected[fault.name] = (injected[fault.name] ?? 0) + 1;
        }, Math.random() * 95);
        pending.add(armed);
      }
      carry.set(target, due);
    }
  }, 100);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stats') process.send?.({ type: 'stats', served, injected });
  });
  process.once('disconnect', () => {
    clearInterval(timer);
    for (const armed of pending) clearTimeout(armed);
    void Promise.all([gitlab.close(), hubzilla.close()]).then(() => process.exit(0));
  });
  process.send?.({ type: 'ready', gitlab: gitlab.url, hubzilla: hubzilla.url });
}

/** The gateway, reporting its memory and event-loop delay on request. */
async function gateway(): Promise<void> {
  const app = buildApp({
    config: loadConfig(
      {
        UPSTREAM_TIMEOUT_MS: String(values['upstream-timeout-ms']),
        POLL_INTERVAL_MS: '1000',
        POLL_MAX_INTERVAL_MS: '5000',
        // Logs at info to a file when asked (to scan them for credentials afterwards), else only fatal ones.
        ...(values['log-file'] ? { LOG_FILE: values['log-file'], LOG_LEVEL: 'info' } : { LOG_LEVEL: 'fatal' }),
      },
      [],
    ),
    gitlabUrl: new URL(String(values.gitlab)),
    hubzillaUrl: new URL(String(values.hubzilla)),
    log: () => {},
  });
  const url = await app.listen(0, '127.0.0.1');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'reset-delay') delay.reset();
    if (message.type !== 'measure') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    process.send?.({
      type: 'measure',
      rss: process.memoryUsage().rss,
      heapUsed: process.memoryUsage().heapUsed,
      delayP99Ms: delay.percentile(99) / 1e6,
      delayMaxMs: delay.max / 1e6,
      breaker: { gitlab: app.gitlab.breaker.state, hubzilla: app.hubzilla?.breaker.state ?? null },
    });
  });
  process.once('disconnect', () => {
    void app.close().then(() => process.exit(0));
  });
  process.send?.({ type: 'ready', url: url.href });
}

interface Operation {
  name: string;
  query: string;
  headers: Record<string, string>;
}

const OPERATIONS: Operation[] = [
  {
    name: 'projects-with-forks',
    query: '{ projects(first: 20) { totalCount nodes { id name visibility forks(first: 5) { nodes { pathWithNamespace forkedFrom { name } } } } } }',
    headers: { 'private-token': 'demo-token' },
  },
  {
    name: 'project-detail',
    query:
      '{ project(fullPath: "platform/core") { id name languages { name } hooks(first: 5) { nodes { url } } jobs(first: 20) { nodes { id status pipeline { ref } } } } }',
    headers: { 'private-token': 'alice-token' },
  },
  { name: 'anonymous-projects', query: '{ projects(first: 10) { nodes { id pathWithNamespace } } }', headers: {} },
  {
    name: 'channel-stream',
    query:
      '{ channel { stream(since: "2020-01-01T00:00:00Z", first: 20) { nodes { messageId body author { name } } } files(first: 20) { nodes { filename } } } }',
    headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO },
  },
  {
    name: 'mixed-upstreams',
    query: '{ project(fullPath: "demo/playground") { name starCount } channel { nickname privacyGroups { name members { xchan { name } } } } }',
    headers: { 'private-token': 'demo-token', 'x-hubzilla-authorization': HUBZILLA_ALICE },
  },
  {
    name: 'mutation-star',
    query: 'mutation { projectStar(input: { id: "platform/core" }) { changed errors { message } } }',
    headers: { 'private-token': 'bob-token' },
  },
  {
    name: 'mutation-unstar',
    query: 'mutation { projectUnstar(input: { id: "platform/core" }) { changed errors { message } } }',
    headers: { 'private-token': 'bob-token' },
  },
  {
    name: 'mutation-item-post',
    query: 'mutation { channelItemPost(input: { body: "soak" }) { item { restId } errors { message } } }',
    headers: { 'x-hubzilla-authorization': HUBZILLA_DEMO },
  },
  { name: 'refused-by-cost', query: '{ projects(first: 100) { nodes { jobs(first: 100) { nodes { project { forkedFrom { name } } } } } } }', headers: {} },
];

function ask<T>(child: ChildProcess, message: { type: string } | null, type: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (reply: { type: string }) => {
      if (reply.type !== type) return;
      child.off('message', onMessage);
      resolve(reply as T);
    };
    child.on('message', onMessage);
    if (message) child.send(message);
  });
}

function start(role: string, args: string[]): ChildProcess {
  return fork(fileURLToPath(import.meta.url), ['--role', role, ...args], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

interface Measure {
  rss: number;
  heapUsed: number;
  delayP99Ms: number;
  delayMaxMs: number;
  breaker: Record<string, string | null>;
}

const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function load(): Promise<void> {
  const minutes = Number(values.minutes);
  const concurrency = Number(values.concurrency);
  const maxRequests = Number(values['max-requests']);
  const until = Date.now() + minutes * 60_000;

  const up = start('upstream', []);
  const { gitlab, hubzilla } = await ask<{ gitlab: string; hubzilla: string }>(up, null, 'ready');
  const gw = start('gateway', [
    '--gitlab',
    gitlab,
    '--hubzilla',
    hubzilla,
    '--upstream-timeout-ms',
    String(values['upstream-timeout-ms']),
    ...(values['log-file'] ? ['--log-file', values['log-file']] : []),
  ]);
  const { url } = await ask<{ url: string }>(gw, null, 'ready');
  const startMeasure = await ask<Measure>(gw, { type: 'measure' }, 'measure');
  gw.send({ type: 'reset-delay' });

  const counts = {
    requests: 0,
    operationsWithErrors: 0,
    httpStatus: {} as Record<string, number>,
    errorsByCode: {} as Record<string, number>,
    byOperation: {} as Record<string, number>,
  };
  const countError = (code: string) => {
    counts.errorsByCode[code] = (counts.errorsByCode[code] ?? 0) + 1;
  };

  async function worker(): Promise<void> {
    while (Date.now() < until && counts.requests < maxRequests) {
      const op = OPERATIONS[Math.floor(Math.random() * OPERATIONS.length)] ?? (OPERATIONS[0] as (typeof OPERATIONS)[number]);
      counts.requests++;
      counts.byOperation[op.name] = (counts.byOperation[op.name] ?? 0) + 1;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...op.headers },
          body: JSON.stringify({ query: op.query }),
        });
        counts.httpStatus[response.status] = (counts.httpStatus[response.status] ?? 0) + 1;
        const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
        if (body.errors?.length) counts.operationsWithErrors++;
        for (const error of body.errors ?? []) countError(error.extensions?.code ?? 'NO_CODE');
      } catch {
        countError('CLIENT_FAILED');
      }
    }
  }

  // Subscribers: each follows a project's jobs for a while, then leaves and another comes.
  const clients: Client[] = [];
  const subscriptionEvents = { events: 0, errors: 0, completed: 0 };
  let subscribing = true;
  async function subscriber(index: number): Promise<void> {
    const client = createClient({
      url: url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { 'Private-Token': index % 2 ? 'demo-token' : 'alice-token' },
      retryAttempts: 1000,
      shouldRetry: () => true,
    });
    clients.push(client);
    while (subscribing && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const stop = client.subscribe(
          { query: `subscription { jobStatusUpdated(projectId: "${index % 2 ? 7 : 1}") { restId status } }` },
          {
            next: () => {
              subscriptionEvents.events++;
            },
            error: () => {
              subscriptionEvents.errors++;
              resolve();
            },
            complete: () => {
              subscriptionEvents.completed++;
              resolve();
            },
          },
        );
        setTimeout(
          () => {
            stop();
            resolve();
          },
          5_000 + Math.random() * 10_000,
        );
      });
    }
  }

  const progress = setInterval(() => {
    const left = Math.max(0, Math.round((until - Date.now()) / 1000));
    console.error(`soak: ${counts.requests} requests, ${subscriptionEvents.events} subscription events, ${left} s left`);
  }, 30_000);
  const subscribers = Array.from({ length: Number(values.subscribers) }, (_, i) => subscriber(i));
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  subscribing = false;
  clearInterval(progress);
  await Promise.all(clients.map((client) => client.dispose()));
  await Promise.all(subscribers);

  const endMeasure = await ask<Measure>(gw, { type: 'measure' }, 'measure');
  const upstreamStats = await ask<{ served: number; injected: Record<string, number> }>(up, { type: 'stats' }, 'stats');
  gw.disconnect();
  up.disconnect();

  const results = {
    minutes,
    concurrency,
    subscribers: Number(values.subscribers),
    faultRate: Number(values['fault-rate']),
    requestsServed: counts.requests,
    requestsPerSecond: Math.round(counts.requests / (minutes * 60)),
    operationsWithErrors: counts.operationsWithErrors,
    httpStatus: counts.httpStatus,
    errorsByCode: counts.errorsByCode,
    byOperation: counts.byOperation,
    subscriptions: subscriptionEvents,
    upstream: { callsServed: upstreamStats.served, faultsInjected: upstreamStats.injected },
    gateway: {
      rssStartMiB: mib(startMeasure.rss),
      rssEndMiB: mib(endMeasure.rss),
      heapStartMiB: mib(startMeasure.heapUsed),
      heapEndMiB: mib(endMeasure.heapUsed),
      eventLoopDelayP99Ms: Math.round(endMeasure.delayP99Ms * 10) / 10,
      eventLoopDelayMaxMs: Math.round(endMeasure.delayMaxMs * 10) / 10,
      breakerAtEnd: endMeasure.breaker,
    },
  };
  console.log(JSON.stringify(results, null, 2));
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(new URL('./results/soak.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
}

if (values.role === 'upstream') await upstreams();
else if (values.role === 'gateway') await gateway();
else await load();
