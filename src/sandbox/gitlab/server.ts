/**
 * The built-in GitLab REST API v4 simulator ("sandbox"): a node:http server
 * over a freshly seeded in-memory store (see seed.ts for users, tokens and
 * projects), with request recording, injectable faults and latency for tests.
 *
 * Per request: record it -> matching fault rule (delay, reset, hang or canned
 * response) -> authenticate (401 for a bad token on any path, Sudo rules) ->
 * route under /api/v4 (404 `{"error":"404 Not Found"}` for unknown paths, 405
 * for a known path with another method) -> latency -> JSON response.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delay, flattenHeaders, parseQuery, splitTarget, writeJson, type JsonResponse } from '../http-util.js';
import { authenticate } from './auth.js';
import { getLanguages, getProject, listAllProjects, listForks, listProjectUsers, listUserProjects, type RouteHandler } from './projects.js';
import { seedStore } from './seed.js';

export { DEMO_USERS, type DemoUser } from './seed.js';

/** One request as the sandbox received it. */
export interface RecordedRequest {
  method: string;
  /** Raw path as received, still percent-encoded, without the query. */
  path: string;
  query: Record<string, string[]>;
  /** Header names in lower case. */
  headers: Record<string, string>;
}

/**
 * A fault to inject into matching requests (all given conditions must match).
 * The rule first waits `delayMs`; then `reset` destroys the socket, `hang`
 * never answers, and `status`/`body` answer with that response (status
 * default 500, body `{"message":"500 Internal Server Error"}`, JSON content type unless `headers` say otherwise). A rule with
 * only `delayMs` slows matching requests and lets them through.
 */
export interface FaultRule {
  method?: string;
  /** A string matches the raw path exactly; a RegExp is tested against the raw path. */
  path?: RegExp | string;
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never respond. */
  hang?: boolean;
  /** Destroy the socket (TCP reset). */
  reset?: boolean;
  /** How many requests the rule applies to; default Infinity. */
  times?: number;
}

export interface GitlabSandboxOptions {
  /** Port to listen on; default 0 = an ephemeral port. */
  port?: number;
  /** Host to bind; default 127.0.0.1. */
  host?: string;
  /** Milliseconds added before every response; default 0. */
  latencyMs?: number;
  /** Extra generated public projects (group `bulk`, ids from 1001), so lists can exceed 10,000 items; default 0. */
  bulkPublicProjects?: number;
}

export interface GitlabSandbox {
  /** Base URL, e.g. http://127.0.0.1:PORT, without a trailing slash; the API is at url + '/api/v4'. */
  url: string;
  /** Every request received, including ones answered by faults, 401 or 404. */
  requests: RecordedRequest[];
  clearRequests(): void;
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  setLatency(ms: number): void;
  /** Stops listening and closes every connection, keep-alive and hanging ones included. */
  close(): Promise<void>;
}

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

const ROUTES: Route[] = [
  { method: 'GET', segments: ['projects'], handler: listAllProjects },
  { method: 'GET', segments: ['projects', ':id'], handler: getProject },
  { method: 'GET', segments: ['projects', ':id', 'users'], handler: listProjectUsers },
  { method: 'GET', segments: ['projects', ':id', 'forks'], handler: listForks },
  { method: 'GET', segments: ['projects', ':id', 'languages'], handler: getLanguages },
  { method: 'GET', segments: ['users', ':user_id', 'projects'], handler: listUserProjects },
];

const NOT_FOUND: JsonResponse = { status: 404, body: { error: '404 Not Found' } };
const NOT_ALLOWED: JsonResponse = { status: 405, body: { error: '405 Not Allowed' } };
const API_PREFIX = '/api/v4/';

/** Matches raw path segments against a route; parameters are decoded segment by segment. */
function matchRoute(route: Route, segments: string[]): Record<string, string> | null {
  if (route.segments.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const pattern = route.segments[i] ?? '';
    const raw = segments[i] ?? '';
    if (pattern.startsWith(':')) {
      if (raw === '') return null;
      try {
        params[pattern.slice(1)] = decodeURIComponent(raw);
      } catch {
        return null;
      }
    } else if (pattern !== raw) {
      return null;
    }
  }
  return params;
}

function faultMatches(rule: FaultRule, method: string, path: string): boolean {
  if (rule.method !== undefined && rule.method.toUpperCase() !== method) return false;
  if (rule.path === undefined) return true;
  if (typeof rule.path === 'string') return rule.path === path;
  rule.path.lastIndex = 0;
  return rule.path.test(path);
}

/** Starts a sandbox GitLab with its own freshly seeded state. */
export async function startGitlabSandbox(options: GitlabSandboxOptions = {}): Promise<GitlabSandbox> {
  const store = seedStore({ bulkPublicProjects: options.bulkPublicProjects ?? 0 });
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

  function dispatch(method: string, path: string, query: Record<string, string[]>, headers: Record<string, string>): JsonResponse {
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
        apiUrl: `${baseUrl}/api/v4`,
        requestUrl: `${baseUrl}${path}`,
      });
    }
    return pathKnown ? NOT_ALLOWED : NOT_FOUND;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const { path, search } = splitTarget(req.url ?? '/');
    const query = parseQuery(search);
    const headers = flattenHeaders(req);
    requests.push({ method, path, query, headers });
    req.resume();

    const fault = takeFault(method, path);
    if (fault) {
      await delay(fault.delayMs ?? 0);
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

    const response = dispatch(method, path, query, headers);
    await delay(latencyMs);
    writeJson(res, response);
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
    setLatency(ms) {
      latencyMs = ms;
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
