/**
 * The built-in GitLab REST API v4 simulator ("sandbox"): a node:http server
 * over a freshly seeded in-memory store (see seed.ts for users, tokens,
 * projects, pipelines, jobs, hooks and push rules), with request recording,
 * injectable faults and latency for tests, a clock that moves pipelines and
 * forks (clock.ts), and webhook delivery (hook-delivery.ts).
 *
 * Per request: read the body (JSON, form or multipart) and record it ->
 * matching fault rule (delay, reset, hang or canned response) ->
 * authenticate (401 for a bad token on any path, Sudo rules) -> route under
 * /api/v4 (404 `{"error":"404 Not Found"}` for unknown paths, 405 for a
 * known path with another method) -> latency -> JSON or streamed response.
 */
import { randomBytes } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BodyError,
  delay,
  flattenHeaders,
  isStreamResponse,
  parseBody,
  parseQuery,
  readBody,
  splitTarget,
  writeJson,
  conditionalGet,
  writeStream,
  type HandlerResponse,
  type JsonResponse,
  type ParsedBody,
} from '../http-util.js';
import type { SandboxRuntime } from './api-request.js';
import { authenticate, throttleIdentity } from './auth.js';
import { SandboxThrottle } from './throttle.js';
import { CiRunner } from './ci-runner.js';
import { addDemoPipeline, DEMO_LOG_JOB_ID, DEMO_LOG_RUN_MS } from './ci-seed.js';
import { SandboxClock } from './clock.js';
import { HookDeliverer, type HookDelivery } from './hook-delivery.js';
import { matchRoute, ROUTES } from './routes.js';
import { seedStore, type BulkForksOptions, type BulkJobsOptions } from './seed.js';
import { MAX_GENERATED_BYTES } from './zip-archive.js';

export { DEMO_USERS, type BulkForksOptions, type BulkJobsOptions, type DemoUser } from './seed.js';
export { LARGE_ARTIFACT_JOB_ID, LARGE_ARTIFACT_PATH, SEED_JOB_TOKEN } from './ci-seed.js';
export { MANUAL_CLOCK_START, STEP_MS } from './clock.js';
export type { HookDelivery } from './hook-delivery.js';

import type { FaultRule, RecordedRequest } from '../http-util.js';
export type { FaultRule, RecordedRequest };

export interface GitlabSandboxOptions {
  /** Port to listen on; default 0 = an ephemeral port. */
  port?: number;
  /** Host to bind; default 127.0.0.1. */
  host?: string;
  /** Milliseconds added before every response; default 0. */
  latencyMs?: number;
  /** Extra generated public projects (group `bulk`, ids from 1001), so lists can exceed 10,000 items; default 0. */
  bulkPublicProjects?: number;
  /** Generated public forks sharing a few bulk parents (seed.ts, "bulk forks"); default none. */
  bulkForks?: BulkForksOptions;
  /** Generated finished pipelines and jobs for bulk and seeded projects (seed.ts, "BULK CI"); default none. */
  bulkJobs?: BulkJobsOptions;
  /** Further tokens `user-1-token` … `user-N-token` (seed.ts); default 0. */
  extraTokens?: number;
  /** API requests a user (or, without a token, an IP) may make per minute, as GitLab's Rack::Attack throttles count them (throttle.ts); 0 (default) never throttles. */
  rateLimitPerMinute?: number;
  /** Send the RateLimit-* headers on every API answer, as an instance may be set to; default only on a 429. */
  rateLimitHeaders?: boolean;
  /**
   * 'real' (default): pipelines and forks advance in real time, one step
   * every STEP_MS (3 s). 'manual': nothing moves until `advance(ms)`;
   * sandbox time starts at MANUAL_CLOCK_START (2024-04-01T12:00:00Z).
   */
  clock?: 'real' | 'manual';
  /** Status shown by the play response: current GitLab's 'pending' (default) or the spec's old 'started'. */
  playStatus?: 'pending' | 'started';
  /**
   * DELETE /projects/:id/hooks/:hook_id: 'spec' (default) answers 200 with
   * the removed hook and 204 when it was already gone; 'gitlab' answers as
   * current GitLab does, 204 on removal and 404 for an unknown hook.
   */
  hookDelete?: 'spec' | 'gitlab';
  /** Whether GET …/jobs/:id/trace honours `Range: bytes=N-` (206); GitLab's API sends the whole log (false, the default). */
  traceRanges?: boolean;
  /** Plays GitLab 19.0+ with its webhook_signing_token feature on: hooks keep a `signing_token` and deliveries carry Standard Webhooks signatures (default off: the token is ignored, as before 19.0). */
  /** Plays GitLab 19.2+, which lists a pipeline's trigger jobs at `…/trigger_jobs` too (default false: the route is missing, as before 19.2). */
  triggerJobs?: boolean;
  webhookSigning?: boolean;
  /**
   * Gives job LARGE_ARTIFACT_JOB_ID (1007) an archive holding one stored,
   * generated file LARGE_ARTIFACT_PATH of this many bytes, produced chunk by
   * chunk on each download (at most MAX_GENERATED_BYTES, just under 4 GiB).
   */
  largeArtifactBytes?: number;
  /** Largest request body accepted (413 above it); default 20 MiB. */
  maxBodyBytes?: number;
  /**
   * Starts a new run of demo/playground's pipeline (test, then pages, about
   * 15 s of work) every this many ms of sandbox time, the first one this long
   * after the start; 0 (default) never. `npm start` sets one minute.
   */
  demoPipelineEveryMs?: number;
}

export interface GitlabSandbox {
  /** Base URL, e.g. http://127.0.0.1:PORT, without a trailing slash; the API is at url + '/api/v4'. */
  url: string;
  /** Every request received, including ones answered by faults, 401 or 404. */
  requests: RecordedRequest[];
  clearRequests(): void;
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  /** Revokes a personal access token, as a user or an admin does in GitLab: every later call with it answers 401. */
  revokeToken(token: string): void;
  setLatency(ms: number): void;
  /** Throttles API requests per user (or IP) per minute from now on, 0 turning it off; `headers` sends RateLimit-* on every answer. */
  setRateLimit(perMinute: number, headers?: boolean): void;
  /** Turns Range support of the job log endpoint on or off, as a proxy in front of GitLab might start or stop honouring it. */
  setTraceRanges(on: boolean): void;
  /**
   * Moves sandbox time forward by `ms` and applies every job, pipeline and
   * import transition that became due, in order, delivering their webhooks.
   */
  advance(ms: number): void;
  /** Sandbox time now (epoch ms): wall time for a real clock, MANUAL_CLOCK_START plus advances for a manual one. */
  now(): number;
  /** Every webhook delivery attempted, oldest first; each gets its status or error once answered. */
  deliveries: HookDelivery[];
  /** Resolves once every delivery started so far has been answered or has failed. */
  flushDeliveries(): Promise<void>;
  /** Stops listening, stops the clock and closes every connection, keep-alive and hanging ones included. */
  close(): Promise<void>;
}

const NOT_FOUND: JsonResponse = { status: 404, body: { error: '404 Not Found' } };
const NOT_ALLOWED: JsonResponse = { status: 405, body: { error: '405 Not Allowed' } };
const API_PREFIX = '/api/v4/';

function faultMatches(rule: FaultRule, method: string, path: string): boolean {
  if (rule.method !== undefined && rule.method.toUpperCase() !== method) return false;
  if (rule.path === undefined) return true;
  if (typeof rule.path === 'string') return rule.path === path;
  rule.path.lastIndex = 0;
  return rule.path.test(path);
}

/** Starts a sandbox GitLab with its own freshly seeded state. */
export async function startGitlabSandbox(options: GitlabSandboxOptions = {}): Promise<GitlabSandbox> {
  const largeArtifactBytes = options.largeArtifactBytes;
  if (largeArtifactBytes !== undefined && !(Number.isInteger(largeArtifactBytes) && largeArtifactBytes >= 0 && largeArtifactBytes <= MAX_GENERATED_BYTES)) {
    throw new RangeError(`largeArtifactBytes must be an integer from 0 to ${MAX_GENERATED_BYTES}`);
  }
  let ci: CiRunner | null = null;
  const every = options.demoPipelineEveryMs ?? 0;
  let nextDemoRun = Number.POSITIVE_INFINITY;
  const clock = new SandboxClock(options.clock ?? 'real', (now) => {
    // The demo's pipeline starts again on a schedule, so a subscriber always has a change coming.
    while (ci && now >= nextDemoRun) {
      ci.progress(addDemoPipeline(store, nextDemoRun), nextDemoRun);
      nextDemoRun += every;
    }
    ci?.runDue(now);
  });
  const store = seedStore({
    bulkPublicProjects: options.bulkPublicProjects ?? 0,
    now: clock.now(),
    largeArtifactBytes,
    bulkForks: options.bulkForks,
    bulkJobs: options.bulkJobs,
    extraTokens: options.extraTokens,
  });
  // Signature timestamps are the wall clock's, as the receiver's 5-minute window is, even when the sandbox's clock is moved by hand.
  const deliverer = new HookDeliverer(store);
  ci = new CiRunner(store, (event) => deliverer.deliver(event));
  ci.clock = clock;
  if (every > 0) {
    nextDemoRun = clock.now() + every;
    // The log tab's job runs a while in the demo (its log grows meanwhile), instead of ending one step after the start.
    const logJob = store.jobs.get(DEMO_LOG_JOB_ID);
    if (logJob?.status === 'running') logJob.dueAt = clock.now() + DEMO_LOG_RUN_MS;
  }
  const runtime: SandboxRuntime = {
    clock,
    ci,
    playStatus: options.playStatus ?? 'pending',
    hookDelete: options.hookDelete ?? 'spec',
    traceRanges: options.traceRanges ?? false,
    webhookSigning: options.webhookSigning ?? false,
    triggerJobs: options.triggerJobs ?? false,
  };
  const maxBodyBytes = options.maxBodyBytes ?? 20 * 1_048_576;
  const throttle = new SandboxThrottle(options.rateLimitPerMinute ?? 0, () => clock.now(), options.rateLimitHeaders ?? false);
  const requests: RecordedRequest[] = [];
  let faults: { rule: FaultRule; remaining: number }[] = [];
  let latencyMs = options.latencyMs ?? 0;
  let baseUrl = '';

  function takeFault(method: string, path: string): FaultRule | undefined {
    const entry = faults.find((f) => f.remaining > 0 && faultMatches(f.rule, method, path));
    if (!entry) return undefined;
    entry.remaining -= 1;
    return entry.rule;
  }

  function dispatch(method: string, path: string, query: Record<string, string[]>, headers: Record<string, string>, body: ParsedBody): HandlerResponse {
    const auth = authenticate(store, headers, query);
    if (!auth.ok) return auth.response;
    if (!path.startsWith(API_PREFIX)) return NOT_FOUND;
    const segments = path.slice(API_PREFIX.length).split('/');
    let pathKnown = false;
    for (const route of ROUTES) {
      const params = matchRoute(route, segments);
      if (!params) continue;
      pathKnown = true;
      // Grape answers HEAD on every GET route.
      if (route.method !== method && !(route.method === 'GET' && method === 'HEAD')) continue;
      return route.handler({
        store,
        viewer: auth.user,
        params,
        query,
        // Rack's params: the body's parameters override the query's.
        input: { ...query, ...body.fields },
        files: body.files,
        headers,
        apiUrl: `${baseUrl}/api/v4`,
        requestUrl: `${baseUrl}${path}`,
        runtime,
      });
    }
    return pathKnown ? NOT_ALLOWED : NOT_FOUND;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const { path, search } = splitTarget(req.url ?? '/');
    const query = parseQuery(search);
    const headers = flattenHeaders(req);
    let raw: Buffer;
    let tooLarge = false;
    try {
      raw = await readBody(req, maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyError)) throw error;
      raw = Buffer.alloc(0);
      tooLarge = true;
    }
    const recorded: RecordedRequest = { method, path, query, headers, body: raw.toString('utf8') };
    requests.push(recorded);

    const fault = takeFault(method, path);
    if (fault) {
      await delay(fault.delayMs ?? 0);
      if (fault.until) await fault.until.catch(() => {});
      if (fault.reset) {
        req.socket.resetAndDestroy();
        return;
      }
      if (fault.hang) return;
      if (fault.status !== undefined || fault.body !== undefined) {
        await delay(latencyMs);
        const status = fault.status ?? 500;
        const body = fault.body ?? JSON.stringify({ message: `${status} ${STATUS_CODES[status] ?? 'Sandbox Fault'}` });
        if (res.destroyed) return;
        res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...fault.headers });
        res.end(body);
        return;
      }
    }

    // GitLab answers every API call with its correlation id, its own whatever the caller sent (Workhorse trusts no
    // caller's id by default). Faults stand for what is in front of GitLab, and send exactly what they say.
    recorded.responseRequestId = newCorrelationId();
    res.setHeader('X-Request-Id', recorded.responseRequestId);
    if (path.startsWith(API_PREFIX)) {
      const identity = throttleIdentity(store, headers, query);
      const verdict = throttle.check(identity ?? req.socket.remoteAddress ?? 'unknown', identity !== null);
      if (verdict.refused) {
        await delay(latencyMs);
        if (res.destroyed) return;
        res.writeHead(429, { ...verdict.refused.headers, 'Content-Length': String(Buffer.byteLength(verdict.refused.body)) });
        res.end(verdict.refused.body);
        return;
      }
      for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
    }
    let response: HandlerResponse;
    if (tooLarge) {
      response = { status: 413, body: { message: '413 Request Entity Too Large' } };
    } else {
      let body: ParsedBody;
      try {
        body = parseBody(headers['content-type'], raw);
      } catch (error) {
        if (!(error instanceof BodyError)) throw error;
        // Rack cannot parse the body; GitLab answers 400 with the parser's complaint.
        body = { fields: {}, files: {} };
        response = { status: 400, body: { error: error.message } };
      }
      response ??= dispatch(method, path, query, headers, body);
    }
    await delay(latencyMs);
    if (isStreamResponse(response)) {
      if (method === 'HEAD') writeJson(res, { status: response.status, headers: response.headers });
      else writeStream(res, response);
    } else {
      writeJson(res, conditionalGet(method, headers, response));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      writeJson(res, { status: 500, body: { message: '500 Internal Server Error', detail: String(error) } });
    });
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  clock.start();
  const address = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  baseUrl = `http://${urlHost}:${address.port}`;

  return {
    url: baseUrl,
    requests,
    clearRequests() {
      requests.length = 0;
    },
    addFault(rule) {
      faults.push({ rule, remaining: rule.times ?? Infinity });
    },
    clearFaults() {
      faults = [];
    },
    revokeToken(token) {
      store.tokens.delete(token);
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    setRateLimit(perMinute, headers = false) {
      throttle.perMinute = perMinute;
      throttle.headersOnEveryAnswer = headers;
    },
    setTraceRanges(on) {
      runtime.traceRanges = on;
    },
    advance(ms) {
      clock.advance(ms);
    },
    now() {
      return clock.now();
    },
    deliveries: deliverer.deliveries,
    flushDeliveries() {
      return deliverer.flush();
    },
    close() {
      clock.stop();
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/** A correlation id as GitLab makes them: a ULID, 26 characters of Crockford base32 (10 of time, 16 random). */
function newCorrelationId(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let time = Date.now();
  let id = '';
  for (let i = 0; i < 10; i++) {
    id = alphabet[time % 32] + id;
    time = Math.floor(time / 32);
  }
  for (const byte of randomBytes(16)) id += alphabet[byte % 32];
  return id;
}
