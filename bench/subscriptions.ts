/**
 * `npm run bench:subscriptions` (also the second half of `npm run bench`):
 * what live job status costs, with N subscribers (default 1,000), each on
 * its own graphql-ws connection, watching one job of one project with the
 * same credentials.
 *
 * - upstream polls per poll interval while the shared poller runs (the
 *   point: one, however many subscribers);
 * - webhook-to-client latency p50/p99: from POSTing a job webhook to the
 *   gateway until each subscriber has the event, and the upstream reads each
 *   event costs;
 * - gateway heap and RSS per idle subscriber (after a forced GC).
 *
 * The gateway and the sandbox run in a child process (so its memory is its
 * own) driven over IPC; the clients run here. Loopback only; bounded in time.
 *
 *   npm run bench:subscriptions -- --subscribers 1000 --interval 100 --events 50
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { startGitlabSandbox } from '../src/sandbox/gitlab/server.js';
import { buildApp } from '../src/server/app.js';

const SECRET = 'bench-webhook-secret-0123456789';
const PROJECT = 7;
const JOB = 2001;

const { values } = parseArgs({
  options: {
    server: { type: 'boolean', default: false },
    subscribers: { type: 'string', default: '1000' },
    interval: { type: 'string', default: '100' },
    events: { type: 'string', default: '50' },
  },
});

interface Measure {
  heapUsed: number;
  rss: number;
  stats: { pollers: number; timers: number; topics: number; streams: number };
  polls: number;
  jobReads: number;
}

type Command = { type: 'measure' } | { type: 'reset' };

/** Child: the sandbox and the gateway, answering measure/reset over IPC. */
async function server(): Promise<void> {
  const interval = String(values.interval);
  const sandbox = await startGitlabSandbox({ clock: 'manual' });
  const app = buildApp({
    config: loadConfig({ LOG_LEVEL: 'warn', POLL_INTERVAL_MS: interval, POLL_MAX_INTERVAL_MS: interval, GITLAB_WEBHOOK_SECRET: SECRET, UPSTREAM_CONNECTIONS: '64' }, []),
    gitlabUrl: new URL(sandbox.url),
    log: () => {},
  });
  const url = await app.listen(0, '127.0.0.1');
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (command: Command) => {
    if (command.type === 'reset') {
      sandbox.clearRequests();
      process.send?.({ type: 'reset' });
      return;
    }
    gc?.();
    gc?.();
    const memory = process.memoryUsage();
    const measure: Measure = {
      heapUsed: memory.heapUsed,
      rss: memory.rss,
      stats: app.hub.stats(),
      polls: sandbox.requests.filter((r) => r.method === 'GET' && r.path === `/api/v4/projects/${PROJECT}/jobs`).length,
      jobReads: sandbox.requests.filter((r) => r.method === 'GET' && r.path === `/api/v4/projects/${PROJECT}/jobs/${JOB}`).length,
    };
    process.send?.({ type: 'measure', measure });
  });
  process.once('disconnect', () => {
    void app.close().then(() => sandbox.close()).then(() => process.exit(0));
  });
  process.send?.({ type: 'ready', url: url.href });
}

function ask<T>(child: ChildProcess, command: Command | null, type: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string; measure?: Measure }) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      resolve((message.measure ?? message) as T);
    };
    child.on('message', onMessage);
    if (command) child.send(command);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function bench(): Promise<void> {
  const subscribers = Number(values.subscribers);
  const intervalMs = Number(values.interval);
  const events = Number(values.events);
  const child = fork(fileURLToPath(import.meta.url), ['--server', '--interval', String(intervalMs)], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { url } = await ask<{ url: string }>(child, null, 'ready');
  const baseline = await ask<Measure>(child, { type: 'measure' }, 'measure');

  // N subscribers, each on its own connection, same credentials.
  const clients: Client[] = [];
  const received: Map<string, number>[] = [];
  const initial: Promise<void>[] = [];
  const stops: (() => void)[] = [];
  for (let i = 0; i < subscribers; i++) {
    const client = createClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { 'Private-Token': 'demo-token' }, retryAttempts: 0 });
    clients.push(client);
    const seen = new Map<string, number>();
    received.push(seen);
    initial.push(
      new Promise<void>((resolve, reject) => {
        stops.push(
          client.subscribe<{ jobStatusUpdated: { finishedAt: string | null } }>(
            { query: `subscription { jobStatusUpdated(projectId: "${PROJECT}", jobId: "${JOB}") { restId status finishedAt } }` },
            {
              next: (result) => {
                seen.set(result.data?.jobStatusUpdated.finishedAt ?? 'initial', performance.now());
                resolve();
              },
              error: reject,
              complete: () => {},
            },
          ),
        );
      }),
    );
  }
  const subscribeStart = performance.now();
  await Promise.all(initial);
  const subscribeMs = performance.now() - subscribeStart;
  const subscribed = await ask<Measure>(child, { type: 'measure' }, 'measure');

  // Polling: the shared poller's upstream calls over a number of intervals.
  await ask(child, { type: 'reset' }, 'reset');
  const intervals = Math.max(10, Math.round(3_000 / intervalMs));
  await sleep(intervals * intervalMs);
  const polling = await ask<Measure>(child, { type: 'measure' }, 'measure');

  // Webhooks: one event at a time, each waited for at every subscriber.
  const payload = JSON.parse(await readFile(new URL('../test/fixtures/gitlab-webhooks/job_event.payload.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  await ask(child, { type: 'reset' }, 'reset');
  const latencies: number[] = [];
  const webhookUrl = new URL('/webhooks/gitlab', url);
  const eventStart = performance.now();
  for (let e = 0; e < events; e++) {
    // A finished job whose outcome flips: every event is a change every subscriber gets.
    const finishedAt = new Date(Date.UTC(2024, 3, 1, 13, 0, e)).toISOString();
    const body = JSON.stringify({ ...payload, project_id: PROJECT, build_id: JOB, pipeline_id: 201, build_status: e % 2 ? 'success' : 'failed', build_finished_at: finishedAt });
    const sent = performance.now();
    const response = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET, 'idempotency-key': `bench-${e}` }, body });
    if (response.status !== 200) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    for (;;) {
      if (received.every((seen) => seen.has(finishedAt))) break;
      await sleep(1);
    }
    for (const seen of received) latencies.push((seen.get(finishedAt) ?? sent) - sent);
  }
  const eventMs = performance.now() - eventStart;
  const webhooks = await ask<Measure>(child, { type: 'measure' }, 'measure');

  for (const stop of stops) stop();
  await Promise.all(clients.map((c) => c.dispose()));
  let after = await ask<Measure>(child, { type: 'measure' }, 'measure');
  for (let i = 0; i < 50 && (after.stats.streams || after.stats.pollers || after.stats.timers || after.stats.topics); i++) {
    await sleep(50);
    after = await ask<Measure>(child, { type: 'measure' }, 'measure');
  }
  child.disconnect();

  latencies.sort((x, y) => x - y);
  const results = {
    subscribers,
    pollIntervalMs: intervalMs,
    subscribeAllMs: Math.round(subscribeMs),
    polling: { intervals, upstreamPolls: polling.polls, pollsPerInterval: Number((polling.polls / intervals).toFixed(2)), pollers: polling.stats.pollers },
    webhooks: {
      events,
      deliveries: latencies.length,
      p50Ms: Number(percentile(latencies, 50).toFixed(2)),
      p99Ms: Number(percentile(latencies, 99).toFixed(2)),
      maxMs: Number((latencies.at(-1) ?? Number.NaN).toFixed(2)),
      eventsPerSecond: Number((events / (eventMs / 1000)).toFixed(1)),
      upstreamReadsPerEvent: Number((webhooks.jobReads / events).toFixed(2)),
      upstreamPollsMeanwhile: webhooks.polls,
    },
    memory: {
      heapPerIdleSubscriberBytes: Math.round((subscribed.heapUsed - baseline.heapUsed) / subscribers),
      rssPerIdleSubscriberBytes: Math.round((subscribed.rss - baseline.rss) / subscribers),
      heapBaseline: baseline.heapUsed,
      heapWithSubscribers: subscribed.heapUsed,
    },
    afterAllLeft: after.stats,
  };

  console.log(`\nSubscriptions: ${subscribers} graphql-ws subscribers (one connection each, same token) on one job of one project\n`);
  console.log(`  subscribe all (access check + initial state)  ${results.subscribeAllMs} ms`);
  console.log(`  upstream polls per ${intervalMs} ms interval          ${results.polling.pollsPerInterval} (${polling.polls} polls in ${intervals} intervals, ${polling.stats.pollers} poller)`);
  console.log(`  webhook -> client latency                     p50 ${results.webhooks.p50Ms} ms, p99 ${results.webhooks.p99Ms} ms, max ${results.webhooks.maxMs} ms (${latencies.length} deliveries of ${events} events)`);
  console.log(`  upstream reads per webhook event              ${results.webhooks.upstreamReadsPerEvent} (polls meanwhile: ${webhooks.polls})`);
  console.log(`  gateway memory per idle subscriber            heap ${(results.memory.heapPerIdleSubscriberBytes / 1024).toFixed(1)} KiB, RSS ${(results.memory.rssPerIdleSubscriberBytes / 1024).toFixed(1)} KiB (heap ${mib(baseline.heapUsed)} -> ${mib(subscribed.heapUsed)})`);
  console.log(`  left after every client went                  ${JSON.stringify(after.stats)}\n`);
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(new URL('./results/subscriptions.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
}

if (values.server) await server();
else await bench();
