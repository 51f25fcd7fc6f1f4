/**
 * `npm run bench:subscriptions` (also the second half of `npm run bench`):
 * what live job status costs, with N subscribers, each on its own WebSocket
 * connection (graphql-transport-ws), watching one job of one project with
 * the same credentials. N is 1,000 (the fan-out the subscriptions work was
 * measured at) and then 10,000 (the memory target's), each on a fresh gateway.
 *
 * - gateway RSS and heap with the N subscribers idle (after a forced GC),
 *   in total and per subscriber over the gateway's baseline, and its peak;
 * - time to subscribe all (connections opened in batches, each subscriber's
 *   access check and initial state included);
 * - upstream polls per poll interval while the shared poller runs (the
 *   point: one, however many subscribers);
 * - webhook-to-client latency p50/p99 over every delivery: from POSTing a
 *   job webhook to the gateway until each subscriber has the event (events
 *   one at a time, 20 ms apart, after one warm-up event that is reported
 *   apart as the cold first event), the CPU each event
 *   costs the gateway and the clients, and the upstream reads per event;
 * - what is left (connections, streams, pollers, timers, bus topics) once
 *   every client went;
 * - with --floor, the same fan-out from a bare TCP server that writes the
 *   same frame to the same sockets: what no server on this machine can beat.
 *
 * The gateway runs as `npm run build` makes it (dist/, plain node, as
 * bench/run.ts runs it) in a child process of its own, driven over IPC, so
 * its memory is what production would use. The sandbox GitLab and the
 * clients run here. The clients are raw TCP sockets speaking just enough
 * WebSocket and graphql-transport-ws (handshake, masked frames out,
 * unmasked frames in, read into one shared buffer) that their own cost, on
 * the same cores, stays small next to the gateway's. Each process needs a
 * file descriptor per subscriber: the bench checks `ulimit -n` first.
 *
 *   npm run bench:subscriptions -- [--subscribers 1000,10000] [--interval 100] [--events 50] [--batch 500]
 *     [--no-build] [--floor] [--gateway-flags='--max-semi-space-size=4 --trace-gc']
 *     [--heap-snapshot PREFIX] [--cpu-prof DIR]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startGitlabSandbox } from '../src/sandbox/gitlab/server.js';
import { cpuMs as processCpuMs } from './proc.js';

const SECRET = 'bench-webhook-secret-0123456789';
const TOKEN = 'demo-token';
const PROJECT = 7;
const JOB = 2001;
const ROOT = new URL('../', import.meta.url);
const TARGET_SUBSCRIBERS = 10_000;
const TARGET_RSS_MB = 200;
const TARGET_P99_MS = 50;

const { values } = parseArgs({
  options: {
    /** Fan-out sizes, each run on a fresh gateway: the subscriptions benchmark's 1,000 and the memory target's 10,000. */
    subscribers: { type: 'string', default: `1000,${TARGET_SUBSCRIBERS}` },
    interval: { type: 'string', default: '100' },
    events: { type: 'string', default: '50' },
    /** Connections opened at once; the next batch starts when this one has its initial state. */
    batch: { type: 'string', default: '500' },
    'no-build': { type: 'boolean', default: false },
    /** Extra node flags for the gateway process, e.g. "--max-semi-space-size=4 --trace-gc". */
    'gateway-flags': { type: 'string', default: '' },
    /** Also measures the floor: the same fan-out from a bare TCP server (see FLOOR). */
    floor: { type: 'boolean', default: false },
    /** Writes a CPU profile of the gateway (the whole run) to this directory. */
    'cpu-prof': { type: 'string' },
    /** Writes heap snapshots of the gateway, PREFIX-idle and PREFIX-subscribed.heapsnapshot (with every subscriber idle), for analysis. */
    'heap-snapshot': { type: 'string' },
  },
});

const SIZES = String(values.subscribers).split(',').map(Number);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error(`--subscribers takes whole numbers of at least 1, comma-separated, not "${values.subscribers}"`);

interface Measure {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  connections: number;
  stats: { pollers: number; timers: number; topics: number; streams: number };
}

type Command = { type: 'measure' } | { type: 'snapshot'; path: string } | { type: 'event'; finishedAt: string };

/**
 * The gateway process: dist/ on plain node, answering measure (after two
 * forced GCs) and snapshot over IPC; it exits when the IPC channel closes.
 */
const GATEWAY = `
const { writeHeapSnapshot } = await import('node:v8');
const { loadConfig } = await import(process.env.BENCH_DIST + 'src/config.js');
const { buildApp } = await import(process.env.BENCH_DIST + 'src/server/app.js');
const app = buildApp({ config: loadConfig(JSON.parse(process.env.BENCH_ENV), []), gitlabUrl: new URL(process.env.BENCH_GITLAB), log: () => {} });
const url = await app.listen(0, '127.0.0.1');
process.on('message', (command) => {
  if (command.type === 'snapshot') {
    globalThis.gc(); globalThis.gc();
    process.send({ type: 'snapshot', path: writeHeapSnapshot(command.path) });
    return;
  }
  globalThis.gc(); globalThis.gc();
  const m = process.memoryUsage();
  process.send({ type: 'measure', measure: { heapUsed: m.heapUsed, heapTotal: m.heapTotal, rss: m.rss, external: m.external, arrayBuffers: m.arrayBuffers, connections: app.websocket.connections, stats: app.hub.stats() } });
});
process.once('disconnect', () => void app.close().then(() => process.exit(0)));
process.send({ type: 'ready', url: url.href });
`;

/**
 * The floor (--floor): the least any server on this machine could do for the
 * same fan-out. A plain TCP server that answers the handshake and the
 * subscription with canned bytes, then on each event writes one prebuilt
 * frame to every socket, the way the gateway's fan-out ends: no ws, no
 * GraphQL, no upstream. What is left is Node's and the kernel's cost of a
 * write per socket, and the clients'.
 */
const FLOOR = `
const net = await import('node:net');
const frame = (text) => { const b = Buffer.from(text); return Buffer.concat([Buffer.from(b.length < 126 ? [0x81, b.length] : [0x81, 126, b.length >> 8, b.length & 255]), b]); };
const next = (finishedAt) => frame(JSON.stringify({ id: '1', type: 'next', payload: { data: { jobStatusUpdated: { restId: ${JOB}, status: 'SUCCESS', finishedAt } } } }));
const sockets = [];
const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on('error', () => {});
  socket.on('close', () => { const i = sockets.indexOf(socket); if (i >= 0) sockets.splice(i, 1); });
  socket.on('data', (chunk) => {
    if (chunk.includes('GET ')) socket.write(Buffer.concat([Buffer.from('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n'), frame('{"type":"connection_ack"}')]));
    if (chunk.includes('"subscribe"')) { sockets.push(socket); socket.write(next(null)); }
  });
});
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', url: 'http://127.0.0.1:' + server.address().port + '/graphql' }));
process.on('message', (command) => {
  if (command.type !== 'event') return;
  const bytes = next(command.finishedAt);
  for (const socket of sockets) socket.write(bytes);
});
process.once('disconnect', () => process.exit(0));
`;

function ask<T>(child: ChildProcess, command: Command | null, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string; measure?: Measure }) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve((message.measure ?? message) as T);
    };
    const onExit = (code: number | null) => reject(new Error(`the gateway exited (${code}) while asked for ${type}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (command) child.send(command);
  });
}

/** The child's peak RSS so far (VmHWM), in bytes; NaN where /proc is not there. */
function peakRss(pid: number | undefined): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user + system) the child used so far, in ms; NaN where /proc is not there. */
function cpuMs(pid: number | undefined): number {
  try {
    return processCpuMs(pid);
  } catch {
    return Number.NaN;
  }
}

/** The soft limit on open files of this process (children inherit it). */
function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? Infinity : Number(soft);
  } catch {
    return Infinity;
  }
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => bytes / 1024 / 1024;
const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

// --- a lean graphql-transport-ws client over a raw socket ------------------------------

/** A client frame: text, final, masked with a zero key (the mask bit is required; the key may be anything). */
function frame(text: string, opcode = 0x1): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const header =
    length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length, 0, 0, 0, 0]) : Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff, 0, 0, 0, 0]);
  if (length > 0xffff) throw new Error('frame too long for this client');
  return Buffer.concat([header, payload]);
}

/** A close frame without a status code. */
const CLOSE_FRAME = frame('', 0x8);

interface Events {
  /** `"finishedAt":"…"` of the event being waited for; null while none. */
  expected: Buffer | null;
  /** When it was sent. */
  sentAt: number;
  /** Deliveries of it so far. */
  received: number;
  /** Latency of each delivery of each event, ms. */
  latencies: Float64Array;
  count: number;
  /** Called when every subscriber has the expected event. */
  onAll: (() => void) | null;
  subscribers: number;
  /** Messages that were neither the initial state nor the expected event. */
  unexpected: number;
  firstUnexpected: string;
}

/** One read buffer for every client socket: reads are handled synchronously, one at a time. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * A subscriber on a raw socket. Reads go through `onread` into the shared
 * buffer (no stream machinery, no Buffer per read): its cost per message is
 * a frame header and a byte search.
 */
class Subscriber {
  /** Bytes of a frame split across reads (rare: messages are small). */
  private pending: Buffer | null = null;
  private upgraded = false;
  private initial: ((error?: Error) => void) | null = null;
  readonly socket: Socket;

  constructor(
    port: number,
    private readonly subscribe: Buffer,
    private readonly events: Events,
    ready: (error?: Error) => void,
  ) {
    this.initial = ready;
    this.socket = connect({
      port,
      host: '127.0.0.1',
      noDelay: true,
      onread: {
        buffer: READ_BUFFER,
        callback: (bytes: number, buffer: Uint8Array) => {
          this.onRead(bytes, buffer as Buffer);
          return true;
        },
      },
    });
    const key = randomBytes(16).toString('base64');
    this.socket.write(
      `GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n`,
    );
    this.socket.write(INIT_FRAME);
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('closed before the initial state')));
  }

  close(): void {
    if (this.socket.destroyed) return;
    this.socket.end(CLOSE_FRAME);
  }

  private fail(error: Error): void {
    const initial = this.initial;
    this.initial = null;
    initial?.(error);
  }

  private onRead(bytes: number, buffer: Buffer): void {
    let data = buffer.subarray(0, bytes);
    if (this.pending) {
      data = Buffer.concat([this.pending, data]);
      this.pending = null;
    }
    let at = 0;
    if (!this.upgraded) {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        this.pending = Buffer.from(data);
        return;
      }
      const head = data.subarray(0, end).toString('latin1');
      if (!head.startsWith('HTTP/1.1 101')) return this.fail(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
      this.upgraded = true;
      at = end + 4;
    }
    while (at < data.length) {
      if (data.length - at < 2) break;
      const opcode = (data[at] ?? 0) & 0x0f;
      let length = (data[at + 1] ?? 0) & 0x7f;
      let offset = at + 2;
      if (length === 126) {
        if (data.length - at < 4) break;
        length = data.readUInt16BE(at + 2);
        offset = at + 4;
      } else if (length === 127) {
        if (data.length - at < 10) break;
        length = Number(data.readBigUInt64BE(at + 2));
        offset = at + 10;
      }
      if (data.length < offset + length) break;
      at = offset + length;
      if (opcode === 0x1) this.onMessage(data, offset, at);
      else if (opcode === 0x9) this.socket.write(frame(data.subarray(offset, at).toString('latin1'), 0xa));
      else if (opcode === 0x8)
        return this.fail(new Error(`closed by the gateway: ${length >= 2 ? data.readUInt16BE(offset) : ''} ${data.subarray(offset + 2, at).toString()}`));
    }
    if (at < data.length) this.pending = Buffer.from(data.subarray(at));
  }

  private onMessage(data: Buffer, start: number, end: number): void {
    const events = this.events;
    if (!this.initial && events.expected) {
      // The event waited for: found by its finishedAt, without decoding the message.
      const found = data.indexOf(events.expected, start);
      if (found >= 0 && found < end && data.indexOf(NEXT, start) === start) {
        events.latencies[events.count++] = performance.now() - events.sentAt;
        if (++events.received === events.subscribers) events.onAll?.();
        return;
      }
    }
    const text = data.subarray(start, end).toString();
    if (this.initial) {
      if (text.includes('"connection_ack"')) {
        this.socket.write(this.subscribe);
        return;
      }
      if (text.includes('"type":"next"') && text.includes(`"restId":${JOB}`)) {
        const initial = this.initial;
        this.initial = null;
        initial();
        return;
      }
      return this.fail(new Error(`unexpected first message: ${text.slice(0, 300)}`));
    }
    if (!events.unexpected++) events.firstUnexpected = text.slice(0, 300);
  }
}

/** How every message of the subscription starts (the bench subscribes with id "1"). */
const NEXT = Buffer.from('{"id":"1","type":"next",');
const INIT_FRAME = frame(JSON.stringify({ type: 'connection_init', payload: { 'Private-Token': TOKEN } }));

// --- the run ----------------------------------------------------------------------------

const SUBSCRIBE_FRAME = frame(
  JSON.stringify({
    id: '1',
    type: 'subscribe',
    payload: { query: `subscription { jobStatusUpdated(projectId: "${PROJECT}", jobId: "${JOB}") { restId status finishedAt } }` },
  }),
);

/** N subscribers, each on its own connection, same credentials, opened `batch` at a time; resolves once all have their initial state. */
async function openClients(port: number, count: number, batch: number, events: Events): Promise<{ clients: Subscriber[]; ms: number }> {
  const clients: Subscriber[] = [];
  const start = performance.now();
  for (let opened = 0; opened < count; opened += batch) {
    const ready: Promise<void>[] = [];
    for (let i = opened; i < Math.min(count, opened + batch); i++) {
      ready.push(
        new Promise<void>((resolve, reject) => clients.push(new Subscriber(port, SUBSCRIBE_FRAME, events, (error) => (error ? reject(error) : resolve())))),
      );
    }
    await Promise.all(ready);
  }
  return { clients, ms: performance.now() - start };
}

function newEvents(subscribers: number, count: number): Events {
  return {
    expected: null,
    sentAt: 0,
    received: 0,
    latencies: new Float64Array(subscribers * count),
    count: 0,
    onAll: null,
    subscribers,
    unexpected: 0,
    firstUnexpected: '',
  };
}

/**
 * Events one at a time, each waited for at every subscriber: `send` makes
 * event `e` (a job finished at `finishedAt`) happen. Returns, per event,
 * the ms until the last subscriber had it.
 */
async function runEvents(events: Events, count: number, send: (e: number, finishedAt: string) => Promise<void>, first = 0): Promise<number[]> {
  const last: number[] = [];
  events.count = 0;
  for (let e = first; e < first + count; e++) {
    // A finished job whose outcome flips: every event is a change every subscriber gets.
    const finishedAt = new Date(Date.UTC(2024, 3, 1, 13, 0, e)).toISOString();
    events.received = 0;
    const all = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`event ${e}: ${events.received} of ${events.subscribers} subscribers had it after 30 s`)), 30_000);
      events.onAll = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    events.expected = Buffer.from(`"finishedAt":${JSON.stringify(finishedAt)}`);
    events.sentAt = performance.now();
    await send(e, finishedAt);
    await all;
    last.push(Number((performance.now() - events.sentAt).toFixed(1)));
    events.expected = null;
    // Let the server settle between events, as events of one job come seconds apart.
    await sleep(20);
  }
  return last;
}

/**
 * The first event through a fresh process compiles the delivery path on the
 * way: it is sent as event -1, before the measured ones, and reported apart
 * (ms until its last subscriber had it), as the query benchmark warms up too.
 */
async function warmUp(events: Events, send: (e: number, finishedAt: string) => Promise<void>): Promise<number> {
  const [ms] = await runEvents(events, 1, send, -1);
  return ms ?? Number.NaN;
}

/** The floor: the same clients and events against the canned-bytes server (FLOOR). */
async function floor(subscribers: number, eventCount: number, batch: number): Promise<{ p50: number; p99: number; last: number; byEvent: number[] }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOR], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const { url } = await ask<{ url: string }>(child, null, 'ready');
    const events = newEvents(subscribers, eventCount);
    const { clients } = await openClients(Number(new URL(url).port), subscribers, batch, events);
    await sleep(500);
    const send = async (_e: number, finishedAt: string) => {
      child.send({ type: 'event', finishedAt });
    };
    await warmUp(events, send);
    const last = await runEvents(events, eventCount, send);
    for (const client of clients) client.socket.destroy();
    const latencies = events.latencies.subarray(0, events.count).sort();
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      last: percentile(
        [...last].sort((a, b) => a - b),
        50,
      ),
      byEvent: last,
    };
  } finally {
    child.disconnect();
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  }
}

async function main(subscribers: number): Promise<Record<string, unknown>> {
  const intervalMs = Number(values.interval);
  const eventCount = Number(values.events);
  const batch = Math.max(1, Number(values.batch));
  const limit = openFileLimit();
  // Each process holds a socket per subscriber (this one the clients', the gateway its accepted ones), plus some.
  if (subscribers + 256 > limit) {
    throw new Error(
      `${subscribers} subscribers need about ${subscribers + 256} open files per process and \`ulimit -n\` is ${limit}: raise it (ulimit -n ${subscribers + 1024}) or pass --subscribers ${Math.max(1, limit - 256)}`,
    );
  }
  if (!values['no-build']) {
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (build.status !== 0) throw new Error('npm run build failed');
  }

  const sandbox = await startGitlabSandbox({ clock: 'manual' });
  const env = {
    LOG_LEVEL: 'warn',
    POLL_INTERVAL_MS: String(intervalMs),
    POLL_MAX_INTERVAL_MS: String(intervalMs),
    GITLAB_WEBHOOK_SECRET: SECRET,
    UPSTREAM_CONNECTIONS: '64',
  };
  const profile = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [];
  const flags = String(values['gateway-flags']).split(' ').filter(Boolean);
  const child = spawn(process.execPath, ['--expose-gc', ...flags, ...profile, '--input-type=module', '-e', GATEWAY], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      NODE_OPTIONS: '',
      BENCH_DIST: new URL('dist/', ROOT).href,
      BENCH_ENV: JSON.stringify(env),
      BENCH_GITLAB: sandbox.url,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const { url } = await ask<{ url: string }>(child, null, 'ready');
    const port = Number(new URL(url).port);
    await sleep(200);
    const baseline = await ask<Measure>(child, { type: 'measure' }, 'measure');
    const snapshot = async (name: string) => {
      if (!values['heap-snapshot']) return;
      const { path } = await ask<{ path: string }>(child, { type: 'snapshot', path: `${values['heap-snapshot']}-${name}.heapsnapshot` }, 'snapshot');
      console.log(`heap snapshot of the gateway: ${path} (writing snapshots inflates RSS: read the memory figures of a run without them)`);
    };
    await snapshot('idle');
    const jobReads = () => sandbox.requests.filter((r) => r.method === 'GET' && r.path === `/api/v4/projects/${PROJECT}/jobs/${JOB}`).length;
    const polls = () => sandbox.requests.filter((r) => r.method === 'GET' && r.path === `/api/v4/projects/${PROJECT}/jobs`).length;

    const events = newEvents(subscribers, eventCount);
    const { clients, ms: subscribeMs } = await openClients(port, subscribers, batch, events);
    await sleep(500);
    const subscribed = await ask<Measure>(child, { type: 'measure' }, 'measure');
    const subscribedPeak = peakRss(child.pid);
    await snapshot('subscribed');

    // Polling: the shared poller's upstream calls over a number of intervals.
    sandbox.clearRequests();
    const intervals = Math.max(10, Math.round(3_000 / intervalMs));
    await sleep(intervals * intervalMs);
    const polled = polls();

    // Webhooks: one event at a time, each waited for at every subscriber.
    const payload = JSON.parse(await readFile(new URL('test/fixtures/gitlab-webhooks/job_event.payload.json', ROOT), 'utf8')) as Record<string, unknown>;
    const webhookUrl = new URL('/webhooks/gitlab', url);
    /** Per event, in order: ms until the last subscriber had it. */
    const send = async (e: number, finishedAt: string) => {
      const body = JSON.stringify({
        ...payload,
        project_id: PROJECT,
        build_id: JOB,
        pipeline_id: 201,
        build_status: e % 2 ? 'success' : 'failed',
        build_finished_at: finishedAt,
      });
      const response = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gitlab-token': SECRET, 'idempotency-key': `bench-${e}` },
        body,
      });
      if (response.status !== 200) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    };
    const coldMs = await warmUp(events, send);
    sandbox.clearRequests();
    const eventStart = performance.now();
    const gatewayCpuStart = cpuMs(child.pid);
    const clientCpuStart = process.cpuUsage();
    const lastDelivery = await runEvents(events, eventCount, send);
    const eventMs = performance.now() - eventStart;
    const gatewayCpuPerEvent = (cpuMs(child.pid) - gatewayCpuStart) / eventCount;
    const clientCpu = process.cpuUsage(clientCpuStart);
    const clientCpuPerEvent = (clientCpu.user + clientCpu.system) / 1000 / eventCount;
    const reads = jobReads();
    const pollsMeanwhile = polls();
    const webhooksPeak = peakRss(child.pid);

    for (const client of clients) client.close();
    let after = await ask<Measure>(child, { type: 'measure' }, 'measure');
    for (let i = 0; i < 100 && (after.connections || after.stats.streams || after.stats.pollers || after.stats.timers || after.stats.topics); i++) {
      await sleep(50);
      after = await ask<Measure>(child, { type: 'measure' }, 'measure');
    }

    // Deliveries are recorded in arrival order, event after event: the first of each is the path before the fan-out.
    const firstDelivery = lastDelivery.map((_, e) => Number((events.latencies[e * subscribers] ?? Number.NaN).toFixed(1)));
    const latencies = events.latencies.subarray(0, events.count).sort();
    const lastSorted = [...lastDelivery].sort((a, b) => a - b);
    const results = {
      subscribers,
      pollIntervalMs: intervalMs,
      subscribeAllMs: Math.round(subscribeMs),
      polling: { intervals, upstreamPolls: polled, pollsPerInterval: Number((polled / intervals).toFixed(2)) },
      webhooks: {
        events: eventCount,
        deliveries: latencies.length,
        p50Ms: Number(percentile(latencies, 50).toFixed(2)),
        p99Ms: Number(percentile(latencies, 99).toFixed(2)),
        maxMs: Number((latencies.at(-1) ?? Number.NaN).toFixed(2)),
        lastDeliveryP50Ms: Number(percentile(lastSorted, 50).toFixed(2)),
        lastDeliveryMaxMs: Number((lastSorted.at(-1) ?? Number.NaN).toFixed(2)),
        coldFirstEventMs: coldMs,
        lastDeliveryByEventMs: lastDelivery,
        firstDeliveryByEventMs: firstDelivery,
        eventsPerSecond: Number((eventCount / (eventMs / 1000)).toFixed(1)),
        upstreamReadsPerEvent: Number((reads / eventCount).toFixed(2)),
        gatewayCpuMsPerEvent: Number(gatewayCpuPerEvent.toFixed(1)),
        clientsCpuMsPerEvent: Number(clientCpuPerEvent.toFixed(1)),
        upstreamPollsMeanwhile: pollsMeanwhile,
        unexpectedMessages: events.unexpected,
      },
      memory: {
        rssBaselineBytes: baseline.rss,
        rssWithSubscribersBytes: subscribed.rss,
        rssPeakBytes: Math.max(subscribedPeak, webhooksPeak),
        heapBaselineBytes: baseline.heapUsed,
        heapWithSubscribersBytes: subscribed.heapUsed,
        heapPerIdleSubscriberBytes: Math.round((subscribed.heapUsed - baseline.heapUsed) / subscribers),
        rssPerIdleSubscriberBytes: Math.round((subscribed.rss - baseline.rss) / subscribers),
        externalPerIdleSubscriberBytes: Math.round((subscribed.external - baseline.external) / subscribers),
      },
      afterAllLeft: { connections: after.connections, ...after.stats },
    };
    // RSS at the target's 10,000 subscribers: measured when that is N, else extrapolated from this run (and only then, if no run has 10,000).
    const measuresRss = subscribers === TARGET_SUBSCRIBERS || !SIZES.includes(TARGET_SUBSCRIBERS);
    const rssAtTarget =
      subscribers === TARGET_SUBSCRIBERS ? subscribed.rss : baseline.rss + ((subscribed.rss - baseline.rss) / subscribers) * TARGET_SUBSCRIBERS;
    const checks = [
      ...(measuresRss
        ? [
            {
              target: `gateway RSS with ${TARGET_SUBSCRIBERS.toLocaleString('en')} idle subscribers < ${TARGET_RSS_MB} MB`,
              value: `${fixed(mb(rssAtTarget))} MB${subscribers === TARGET_SUBSCRIBERS ? '' : ` (extrapolated from ${subscribers})`}`,
              met: mb(rssAtTarget) < TARGET_RSS_MB,
            },
          ]
        : []),
      // Latency does not extrapolate: each fan-out size is its own check.
      {
        target: `webhook -> client p99 < ${TARGET_P99_MS} ms at ${subscribers.toLocaleString('en')} subscribers`,
        value: `${fixed(results.webhooks.p99Ms)} ms`,
        met: results.webhooks.p99Ms < TARGET_P99_MS,
      },
    ];

    console.log(
      `\nSubscriptions: ${subscribers} WebSocket subscribers (one connection each, same token) on one job of one project; gateway from dist/ on node ${process.version}\n`,
    );
    console.log(`  subscribe all (${batch} connections at a time, access check + initial state)  ${results.subscribeAllMs} ms`);
    console.log(
      `  gateway RSS                                   ${fixed(mb(baseline.rss))} MB idle -> ${fixed(mb(subscribed.rss))} MB with ${subscribers} subscribers (peak ${fixed(mb(results.memory.rssPeakBytes))} MB)`,
    );
    console.log(
      `  gateway heap                                  ${fixed(mb(baseline.heapUsed))} MB -> ${fixed(mb(subscribed.heapUsed))} MB (heap total ${fixed(mb(subscribed.heapTotal))} MB, external ${fixed(mb(subscribed.external))} MB)`,
    );
    console.log(
      `  per idle subscriber                           heap ${fixed(results.memory.heapPerIdleSubscriberBytes / 1024)} KiB, RSS ${fixed(results.memory.rssPerIdleSubscriberBytes / 1024)} KiB`,
    );
    console.log(`  upstream polls per ${intervalMs} ms interval          ${results.polling.pollsPerInterval} (${polled} polls in ${intervals} intervals)`);
    console.log(
      `  webhook -> client latency                     p50 ${fixed(results.webhooks.p50Ms)} ms, p99 ${fixed(results.webhooks.p99Ms)} ms, max ${fixed(results.webhooks.maxMs)} ms (${latencies.length} deliveries of ${eventCount} events; last subscriber p50 ${fixed(results.webhooks.lastDeliveryP50Ms)} ms, max ${fixed(results.webhooks.lastDeliveryMaxMs)} ms)`,
    );
    console.log(`  the cold first event (before those)           last subscriber had it after ${fixed(coldMs)} ms`);
    console.log(
      `  CPU per webhook event                         gateway ${fixed(gatewayCpuPerEvent)} ms, clients (this process) ${fixed(clientCpuPerEvent)} ms`,
    );
    console.log(`  upstream reads per webhook event              ${results.webhooks.upstreamReadsPerEvent} (polls meanwhile: ${pollsMeanwhile})`);
    if (events.unexpected) console.log(`  unexpected messages                           ${events.unexpected}, first: ${events.firstUnexpected}`);
    console.log(`  left after every client went                  ${JSON.stringify(results.afterAllLeft)}\n`);
    for (const check of checks) console.log(`  ${check.met ? 'met    ' : 'NOT met'}  ${check.target}: ${check.value}`);
    console.log('');
    return { ...results, checks };
  } finally {
    child.disconnect();
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
    await sandbox.close();
  }
}

const runs: Record<string, unknown>[] = [];
for (const subscribers of SIZES) {
  const results = await main(subscribers);
  if (values.floor) {
    // The gateway's sockets are gone; the floor opens as many again.
    await sleep(1000);
    const { p50, p99, last, byEvent } = await floor(subscribers, Number(values.events), Math.max(1, Number(values.batch)));
    results.floor = {
      p50Ms: Number(p50.toFixed(2)),
      p99Ms: Number(p99.toFixed(2)),
      lastDeliveryP50Ms: Number(last.toFixed(2)),
      lastDeliveryByEventMs: byEvent,
    };
    console.log(`  floor: the same frame written to the same ${subscribers} sockets by a bare TCP server (no ws, GraphQL or upstream):`);
    console.log(`         p50 ${fixed(p50)} ms, p99 ${fixed(p99)} ms, last subscriber p50 ${fixed(last)} ms\n`);
  }
  runs.push(results);
}
await mkdir(new URL('bench/results/', ROOT), { recursive: true });
await writeFile(new URL('bench/results/subscriptions.json', ROOT), `${JSON.stringify(runs, null, 2)}\n`);
