/**
 * `npm run bench:job-log` (also part of `npm run bench`): what a live job
 * log costs. A stub GitLab serves one running job whose log grows line by
 * line (any byte range generated on the fly, so a 100 MB log costs it no
 * memory); the gateway runs from dist/ in a child process of its own.
 *
 * 1. Fan-out: N subscribers (default 1,000, graphql-ws, one connection
 *    each, same credentials) follow the log while it grows; reported:
 *    trace reads per poll interval (target: one), and the time to subscribe.
 * 2. Bytes: one subscriber follows a log growing to --megabytes (default
 *    100) with a server that honours Range, then one that does not (GitLab's
 *    API); reported: bytes read from the upstream per byte delivered
 *    (target: close to 1 with Range), and the gateway's RSS over the run
 *    (target: flat) sampled every 250 ms.
 *
 *   npm run bench:job-log -- [--subscribers 1000] [--megabytes 100] [--interval 100] [--no-build]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const ROOT = new URL('../', import.meta.url);
const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    megabytes: { type: 'string', default: '100' },
    interval: { type: 'string', default: '100' },
    'no-build': { type: 'boolean', default: false },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const MEGABYTES = Number(values.megabytes);
const INTERVAL = Number(values.interval);

/** Every line has the same length, so a byte range maps to lines without storing any. */
const LINE = 100;
function line(i: number): string {
  const text = `\u001b[32;1m✓\u001b[0;m step ${i} of the script`;
  return `${text}${' '.repeat(LINE - Buffer.byteLength(text) - 1)}\n`;
}
function bytesOf(from: number, to: number): Buffer {
  const first = Math.floor(from / LINE);
  const last = Math.ceil(to / LINE);
  const parts: Buffer[] = [];
  for (let i = first; i < last; i++) parts.push(Buffer.from(line(i)));
  const all = Buffer.concat(parts);
  return all.subarray(from - first * LINE, to - first * LINE);
}

interface Stub {
  url: string;
  /** Length of the log now. */
  length: number;
  finished: boolean;
  ranges: boolean;
  traceReads: number;
  bytesServed: number;
  close(): Promise<void>;
}

async function startStub(): Promise<Stub> {
  const stub = { url: '', length: 0, finished: false, ranges: true, traceReads: 0, bytesServed: 0, close: async () => {} } as Stub;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://stub').pathname;
    if (path === '/api/v4/projects/1/jobs/1') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 1,
          name: 'build',
          stage: 'build',
          ref: 'main',
          status: stub.finished ? 'success' : 'running',
          tag: false,
          created_at: '2024-01-01T00:00:00Z',
        }),
      );
      return;
    }
    if (path === '/api/v4/projects/1/jobs/1/trace') {
      stub.traceReads++;
      const end = stub.length;
      const match = stub.ranges ? /^bytes=(\d+)-$/.exec(req.headers.range ?? '') : null;
      const from = match ? Number(match[1]) : 0;
      if (match && from >= end) {
        res.writeHead(416, { 'content-range': `bytes */${end}` });
        res.end();
        return;
      }
      res.writeHead(match ? 206 : 200, { 'content-type': 'text/plain', 'content-length': String(end - from) });
      // Written in 1 MB pieces, generated as they go.
      let at = from;
      const write = () => {
        while (at < end) {
          const piece = bytesOf(at, Math.min(end, at + 1024 * 1024));
          at += piece.length;
          stub.bytesServed += piece.length;
          if (!res.write(piece)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"message":"404 Not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () => new Promise((resolve) => server.close(() => resolve()));
  return stub;
}

const GATEWAY = `
const { loadConfig } = await import(process.env.BENCH_DIST + 'src/config.js');
const { buildApp } = await import(process.env.BENCH_DIST + 'src/server/app.js');
const app = buildApp({ config: loadConfig(JSON.parse(process.env.BENCH_ENV), []), gitlabUrl: new URL(process.env.BENCH_GITLAB), log: () => {} });
const url = await app.listen(0, '127.0.0.1');
process.on('message', () => { const m = process.memoryUsage(); process.send({ type: 'measure', rss: m.rss, heapUsed: m.heapUsed, stats: app.hub.stats() }); });
process.once('disconnect', () => void app.close().then(() => process.exit(0)));
process.send({ type: 'ready', url: url.href });
`;

async function startGateway(stub: Stub): Promise<{ child: ChildProcess; url: string }> {
  const env = { POLL_INTERVAL_MS: String(INTERVAL), POLL_MAX_INTERVAL_MS: String(INTERVAL * 4), LOG_LEVEL: 'error', MAX_WS_CONNECTIONS: '100000' };
  const child = spawn(process.execPath, ['--input-type=module', '-e', GATEWAY], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DIST: new URL('dist/', ROOT).href, BENCH_ENV: JSON.stringify(env), BENCH_GITLAB: stub.url },
  });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return { child, url };
}

function measure(child: ChildProcess): Promise<{ rss: number; heapUsed: number; stats: { pollers: number; streams: number } }> {
  return new Promise((resolve) => {
    child.once('message', (m: { rss: number; heapUsed: number; stats: { pollers: number; streams: number } }) => resolve(m));
    child.send({});
  });
}

const QUERY = 'subscription { jobLogAppended(projectId: "1", jobId: "1", tailLines: 5) { offset raw complete } }';
const MB = 1024 * 1024;

async function fanOut(): Promise<void> {
  const stub = await startStub();
  stub.length = 200 * LINE;
  const { child, url } = await startGateway(stub);
  const wsUrl = url.replace(/^http/, 'ws');
  const clients = Array.from({ length: SUBSCRIBERS }, () =>
    createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { 'Private-Token': 'bench' }, retryAttempts: 0, lazy: true }),
  );
  let received = 0;
  const started = performance.now();
  const firsts: Promise<void>[] = [];
  const stops: (() => void)[] = [];
  for (const client of clients) {
    firsts.push(
      new Promise<void>((resolve) => {
        stops.push(
          client.subscribe(
            { query: QUERY },
            {
              next: () => {
                received++;
                resolve();
              },
              error: () => resolve(),
              complete: () => resolve(),
            },
          ),
        );
      }),
    );
  }
  await Promise.all(firsts);
  const subscribeMs = performance.now() - started;
  // The log grows by ten lines every interval for 5 seconds; count the reads.
  const reads0 = stub.traceReads;
  const t0 = performance.now();
  const grow = setInterval(() => (stub.length += 10 * LINE), INTERVAL);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  clearInterval(grow);
  const elapsed = performance.now() - t0;
  const reads = stub.traceReads - reads0;
  const m = await measure(child);
  console.log(`fan-out: ${SUBSCRIBERS} subscribers on one job log, poll interval ${INTERVAL} ms`);
  console.log(`  subscribed in ${(subscribeMs / 1000).toFixed(2)} s; pollers ${m.stats.pollers}, streams ${m.stats.streams}`);
  console.log(`  trace reads per interval: ${((reads * INTERVAL) / elapsed).toFixed(2)} (target 1; ${reads} reads in ${(elapsed / 1000).toFixed(1)} s)`);
  console.log(`  chunks delivered: ${received}; gateway RSS ${(m.rss / MB).toFixed(0)} MB`);
  for (const stop of stops) stop();
  await Promise.all(clients.map((c) => c.dispose()));
  child.disconnect();
  await stub.close();
}

async function bytes(ranges: boolean, megabytes: number): Promise<void> {
  const stub = await startStub();
  stub.ranges = ranges;
  stub.length = 100 * LINE;
  const { child, url } = await startGateway(stub);
  const client = createClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { 'Private-Token': 'bench' }, retryAttempts: 0 });
  let delivered = 0;
  const done = new Promise<void>((resolve, reject) => {
    client.subscribe(
      { query: QUERY.replace(', tailLines: 5', '') },
      {
        next: (r) => {
          const c = (r.data as { jobLogAppended: { raw: string } } | null)?.jobLogAppended;
          if (c) delivered += Buffer.byteLength(c.raw);
        },
        error: reject,
        complete: resolve,
      },
    );
  });
  const target = megabytes * MB;
  const rss: number[] = [];
  const sampler = setInterval(() => void measure(child).then((m) => rss.push(m.rss)), 250);
  // Grows by 1% of the target per interval, then the job finishes.
  const grow = setInterval(() => {
    stub.length = Math.min(target, stub.length + Math.ceil(target / 100 / LINE) * LINE);
    if (stub.length >= target) {
      stub.finished = true;
      clearInterval(grow);
    }
  }, INTERVAL);
  await done;
  clearInterval(sampler);
  const m = await measure(child);
  rss.push(m.rss);
  console.log(`bytes: one subscriber, a log growing to ${megabytes} MB, ${ranges ? 'a server that honours Range' : 'whole reads (GitLab’s API)'}`);
  console.log(
    `  delivered ${(delivered / MB).toFixed(1)} MB of ${(stub.length / MB).toFixed(1)} MB; read ${(stub.bytesServed / MB).toFixed(1)} MB from the upstream`,
  );
  console.log(`  upstream bytes per byte delivered: ${(stub.bytesServed / Math.max(1, delivered)).toFixed(3)}${ranges ? ' (target: close to 1)' : ''}`);
  console.log(
    `  gateway RSS: min ${(Math.min(...rss) / MB).toFixed(0)} MB, max ${(Math.max(...rss) / MB).toFixed(0)} MB over ${rss.length} samples (target: flat)`,
  );
  await client.dispose();
  child.disconnect();
  await stub.close();
}

if (!values['no-build']) {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await fanOut();
await bytes(true, MEGABYTES);
await bytes(false, Math.min(MEGABYTES, 10));
