/**
 * The benchmark's upstreams, as a process of their own: the sandbox GitLab and
 * Hubzilla seeded with BENCH_*_OPTIONS, each behind a small front on loopback
 * that adds the latency and counts the calls, and a control server:
 *
 *   GET /stats            {"gitlab": n, "hubzilla": n}: API calls served since start
 *   PUT /latency?ms=20    the latency each front adds to every response
 *
 * The front memoizes responses (per method, URL and credential headers): the
 * bench seed never moves (manual clock, no writes), so every answer is the one
 * the sandbox rendered the first time. Without that, rendering 2,000 GitLab job
 * records per query costs the sandbox more CPU than either client spends, and
 * on two cores it would set the pace for both. `--render` turns memoizing off.
 *
 * Prints one JSON line `{"gitlab", "hubzilla", "control"}` (base URLs) once
 * listening; SIGTERM stops it.
 *
 *   node dist/bench/sandbox-process.js [--render]
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startGitlabSandbox } from '../src/sandbox/gitlab/server.js';
import { startHubzillaSandbox } from '../src/sandbox/hubzilla/server.js';
import { BENCH_GITLAB_OPTIONS, BENCH_HUBZILLA_OPTIONS } from './sandbox-options.js';

const { values } = parseArgs({ options: { render: { type: 'boolean', default: false } } });

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Hop-by-hop headers a proxy does not pass on (RFC 9110 7.6.1), and the length it sets itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);
const CREDENTIAL_HEADERS = ['private-token', 'authorization', 'sudo', 'job-token'];

let latencyMs = 0;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A front for one sandbox: counts API calls under `apiPrefix`, adds the latency, memoizes unless --render. */
async function startFront(sandboxUrl: string, apiPrefix: string) {
  const pool = new Pool(sandboxUrl, { connections: 256, pipelining: 1 });
  const memo = new Map<string, Promise<Answer>>();
  const front = { url: '', calls: 0, close: async () => {} };

  async function forward(req: IncomingMessage, body: Buffer): Promise<Answer> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !HOP_BY_HOP.has(name) && name !== 'host') headers[name] = value;
    const response = await pool.request({ method: (req.method ?? 'GET') as 'GET', path: req.url ?? '/', headers, body: body.length ? body : undefined });
    const answer: Answer = { status: response.statusCode, headers: {}, body: Buffer.from(await response.body.arrayBuffer()) };
    for (const [name, value] of Object.entries(response.headers)) {
      if (HOP_BY_HOP.has(name) || value === undefined) continue;
      answer.headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    answer.headers['content-length'] = String(answer.body.length);
    return answer;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if ((req.url ?? '').startsWith(apiPrefix)) front.calls += 1;
    let answer: Promise<Answer>;
    if (!values.render && req.method === 'GET') {
      const key = `${req.url} ${CREDENTIAL_HEADERS.map((h) => req.headers[h] ?? '').join(' ')}`;
      answer = memo.get(key) ?? forward(req, body);
      memo.set(key, answer);
    } else {
      answer = forward(req, body);
    }
    const [{ status, headers, body: payload }] = await Promise.all([answer, latencyMs > 0 ? sleep(latencyMs) : undefined]);
    res.writeHead(status, headers).end(payload);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => res.writeHead(502).end(String(error)));
  });
  server.keepAliveTimeout = 60_000;
  front.url = await listen(server);
  front.close = async () => {
    server.close();
    server.closeAllConnections();
    await pool.close();
  };
  return front;
}

const gitlab = await startGitlabSandbox(BENCH_GITLAB_OPTIONS);
const hubzilla = await startHubzillaSandbox(BENCH_HUBZILLA_OPTIONS);
// The sandboxes record every request; nobody reads the records here.
const dropRecords = setInterval(() => {
  gitlab.clearRequests();
  hubzilla.clearRequests();
}, 250);
const gitlabFront = await startFront(gitlab.url, '/api/v4/');
const hubzillaFront = await startFront(hubzilla.url, '/api/z/1.0/');

const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://control');
  if (req.method === 'GET' && url.pathname === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ gitlab: gitlabFront.calls, hubzilla: hubzillaFront.calls }));
    return;
  }
  if (req.method === 'PUT' && url.pathname === '/latency') {
    const ms = Number(url.searchParams.get('ms'));
    if (!Number.isFinite(ms) || ms < 0) {
      res.writeHead(400).end('ms must be a number >= 0');
      return;
    }
    latencyMs = ms;
    res.writeHead(204).end();
    return;
  }
  res.writeHead(404).end();
});
console.log(JSON.stringify({ gitlab: gitlabFront.url, hubzilla: hubzillaFront.url, control: await listen(control) }));

process.once('SIGTERM', () => {
  clearInterval(dropRecords);
  control.close();
  void Promise.all([gitlabFront.close(), hubzillaFront.close(), gitlab.close(), hubzilla.close()]).then(() => process.exit(0));
});
