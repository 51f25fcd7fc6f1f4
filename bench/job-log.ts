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
 * 3. A CI job's pace: a log written at an even pace to --walk-megabytes
 *    (default 10) over --walk-minutes (default 10), then quiet for a minute
 *    before the job ends, from a server that ignores Range (GitLab's API),
 *    at the gateway's default poll intervals. Two gateways follow it side
 *    by side: the watch as it was (a whole read every poll, no ETag:
 *    LOG_READ_BYTES_PER_SECOND=0 and a server without ETags) and as it is
 *    (If-None-Match, and at most LOG_READ_BYTES_PER_SECOND of reads). Each
 *    minute: the log's size, bytes read per byte delivered, and how far
 *    behind the log the subscriber was (the time from a byte's writing to
 *    its delivery). Every byte must arrive once, in order.
 *
 *   npm run bench:job-log -- [--subscribers 1000] [--megabytes 100] [--interval 100]
 *                            [--walk-minutes 10] [--walk-megabytes 10] [--only fan-out|bytes|walk] [--no-build]
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
    'walk-minutes': { type: 'string', default: '10' },
    'walk-megabytes': { type: 'string', default: '10' },
    only: { type: 'string' },
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
  /** Whether the log's answer carries a weak ETag and answers a matching If-None-Match with 304, as GitLab's does. */
  etags: boolean;
  traceReads: number;
  bytesServed: number;
  close(): Promise<void>;
}

async function startStub(): Promise<Stub> {
  const stub = { url: '', length: 0, finished: false, ranges: true, etags: false, traceReads: 0, bytesServed: 0, close: async () => {} } as Stub;
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
      // The log's bytes are a function of its length, so the length names its content.
      const etag = `W/"${end.toString(16)}"`;
      if (stub.etags && req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag });
        res.end();
        return;
      }
      const match = stub.ranges ? /^bytes=(\d+)-$/.exec(req.headers.range ?? '') : null;
      const from = match ? Number(match[1]) : 0;
      if (match && from >= end) {
        res.writeHead(416, { 'content-range': `bytes */${end}` });
        res.end();
        return;
      }
      res.writeHead(match ? 206 : 200, { 'content-type': 'text/plain', 'content-length': String(end - from), ...(stub.etags ? { etag } : {}) });
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

async function startGateway(stub: Stub, settings: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const env = {
    POLL_INTERVAL_MS: String(INTERVAL),
    POLL_MAX_INTERVAL_MS: String(INTERVAL * 4),
    LOG_LEVEL: 'error',
    MAX_WS_CONNECTIONS: '100000',
    ...settings,
  };
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

interface WalkResult {
  name: string;
  minutes: { size: number; read: number; delivered: number; delays: number[] }[];
  bytesRead: number;
  delivered: number;
  reads: number;
  notModified: number;
  broken: string | null;
}

/** One subscriber follows a log written at a CI job's pace; what it cost and how far behind it was, minute by minute. */
async function walkOne(name: string, etags: boolean, settings: Record<string, string>, minutes: number, megabytes: number): Promise<WalkResult> {
  const stub = await startStub();
  stub.ranges = false;
  stub.etags = etags;
  const { child, url } = await startGateway(stub, { POLL_INTERVAL_MS: '5000', POLL_MAX_INTERVAL_MS: '60000', ...settings });
  const client = createClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { 'Private-Token': 'bench' }, retryAttempts: 0 });
  const target = Math.floor((megabytes * MB) / LINE) * LINE;
  const growMs = minutes * 60_000;
  const started = performance.now();
  // When each length was reached: a delivered byte's delay is measured from the moment it was written.
  const written: { at: number; length: number }[] = [{ at: started, length: 0 }];
  const writtenAt = (offset: number): number => {
    let lo = 0;
    let hi = written.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((written[mid]?.length ?? 0) >= offset) hi = mid;
      else lo = mid + 1;
    }
    return written[lo]?.at ?? started;
  };
  const result: WalkResult = { name, minutes: [], bytesRead: 0, delivered: 0, reads: 0, notModified: 0, broken: null };
  const minuteOf = (at: number) => {
    const index = Math.floor((at - started) / 60_000);
    while (result.minutes.length <= index) result.minutes.push({ size: 0, read: 0, delivered: 0, delays: [] });
    return result.minutes[index] as WalkResult['minutes'][number];
  };
  let expected = 0;
  const done = new Promise<void>((resolve, reject) => {
    client.subscribe(
      { query: QUERY.replace(', tailLines: 5', '') },
      {
        next: (r) => {
          const c = (r.data as { jobLogAppended: { offset: number; raw: string } } | null)?.jobLogAppended;
          if (!c || c.raw === '') return;
          const bytes = Buffer.from(c.raw);
          if (c.offset !== expected || !bytes.equals(bytesOf(c.offset, c.offset + bytes.length)))
            result.broken ??= `chunk at ${c.offset}, expected ${expected}`;
          expected = c.offset + bytes.length;
          const now = performance.now();
          const minute = minuteOf(now);
          minute.delivered += bytes.length;
          minute.delays.push(now - writtenAt(expected));
          result.delivered += bytes.length;
        },
        error: reject,
        complete: resolve,
      },
    );
  });
  // Ten lines at a time, at an even pace; then a quiet minute; then the job ends.
  const step = 10 * LINE;
  const every = Math.max(10, growMs / (target / step));
  let lastRead = 0;
  const meter = setInterval(() => {
    const minute = minuteOf(performance.now());
    minute.size = stub.length;
    minute.read += stub.bytesServed - lastRead;
    lastRead = stub.bytesServed;
  }, 1_000);
  const grow = setInterval(() => {
    stub.length = Math.min(target, stub.length + step);
    written.push({ at: performance.now(), length: stub.length });
    if (stub.length >= target) clearInterval(grow);
  }, every);
  await new Promise((resolve) => setTimeout(resolve, growMs + 60_000));
  stub.finished = true;
  await done;
  clearInterval(grow);
  clearInterval(meter);
  const last = minuteOf(performance.now());
  last.read += stub.bytesServed - lastRead;
  result.bytesRead = stub.bytesServed;
  result.reads = stub.traceReads;
  await client.dispose();
  child.disconnect();
  await stub.close();
  if (expected !== target) result.broken ??= `delivered ${expected} of ${target} bytes`;
  return result;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

async function walk(minutes: number, megabytes: number): Promise<void> {
  console.log(`walk: a log written to ${megabytes} MB over ${minutes} min, quiet for 1 min, then the job ends; Range ignored; POLL_INTERVAL_MS 5000`);
  const [before, now] = await Promise.all([
    walkOne('as it was (every poll reads the whole log, no ETag)', false, { LOG_READ_BYTES_PER_SECOND: '0' }, minutes, megabytes),
    walkOne('as it is (If-None-Match, LOG_READ_BYTES_PER_SECOND 1 MiB)', true, {}, minutes, megabytes),
  ]);
  for (const run of [before, now]) {
    console.log(`  ${run.name}:`);
    console.log('    minute  log MB  read MB  read/delivered  behind p50 s  behind max s');
    run.minutes.forEach((m, i) => {
      const ratio = m.delivered > 0 ? (m.read / m.delivered).toFixed(1) : m.read > 0 ? 'inf' : '-';
      const p50 = m.delays.length ? (quantile(m.delays, 0.5) / 1000).toFixed(1) : '-';
      const max = m.delays.length ? (Math.max(...m.delays) / 1000).toFixed(1) : '-';
      console.log(
        `    ${String(i + 1).padStart(6)}  ${(m.size / MB).toFixed(1).padStart(6)}  ${(m.read / MB).toFixed(1).padStart(7)}  ${ratio.padStart(14)}  ${p50.padStart(12)}  ${max.padStart(12)}`,
      );
    });
    const delays = run.minutes.flatMap((m) => m.delays);
    console.log(
      `    total: ${(run.bytesRead / MB).toFixed(1)} MB read in ${run.reads} reads for ${(run.delivered / MB).toFixed(1)} MB delivered: ` +
        `${(run.bytesRead / Math.max(1, run.delivered)).toFixed(1)} bytes read per byte delivered; behind the log p50 ` +
        `${(quantile(delays, 0.5) / 1000).toFixed(1)} s, p95 ${(quantile(delays, 0.95) / 1000).toFixed(1)} s, max ${(Math.max(...delays) / 1000).toFixed(1)} s; ` +
        `${run.broken ? `BROKEN: ${run.broken}` : 'every byte once, in order'}`,
    );
  }
  console.log(`  bytes read, as it is / as it was: ${(now.bytesRead / Math.max(1, before.bytesRead)).toFixed(3)}`);
  if (before.broken || now.broken) process.exitCode = 1;
}

if (!values['no-build']) {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const only = values.only;
if (!only || only === 'fan-out') await fanOut();
if (!only || only === 'bytes') {
  await bytes(true, MEGABYTES);
  await bytes(false, Math.min(MEGABYTES, 10));
}
if (!only || only === 'walk') await walk(Number(values['walk-minutes']), Number(values['walk-megabytes']));
