/**
 * `/healthz` (the process is up and serving) and `/readyz` (each configured
 * upstream answers, with its latency; 503 when one does not or while the
 * gateway shuts down, so a load balancer stops sending it requests).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UpstreamError } from '../errors.js';
import type { HttpClient, PathSegments } from '../upstreams/http.js';

export interface ReadinessTarget {
  client: HttpClient;
  /** A cheap GET the upstream answers without credentials (any status below 500 means it is up). */
  path: PathSegments;
  /** The path exists in every version of the API (GitLab's `version`): a 404 there means the API is not where it was configured. */
  alwaysThere?: boolean;
}

export interface UpstreamReadiness {
  reachable: boolean;
  /** The status the probe got; null when none came. */
  status: number | null;
  latencyMs: number;
  /** Error code when unreachable, e.g. UPSTREAM_TIMEOUT. */
  error?: string;
}

export interface HealthOptions {
  targets: readonly ReadinessTarget[];
  /** Longest wait for one probe, in ms. */
  timeoutMs: number;
  shuttingDown(): boolean;
  /** With workers: whether every worker of the group is ready (asked of the primary). */
  groupReady?: () => Promise<boolean>;
  /** With Redis: whether it answers now. Not answering, the gateway still serves (slower: no shared cache or budget), and says so. */
  redisAnswering?: () => boolean;
}

/**
 * Probes every upstream at once; an upstream is ready when it answers below
 * 500 within the timeout, and not 404 on a route every version of its API
 * has: that says the API is not where it was configured (GITLAB_URL with a
 * path that is not GitLab's root), and every call would miss.
 */
export async function checkReadiness(targets: readonly ReadinessTarget[], timeoutMs: number): Promise<Record<string, UpstreamReadiness>> {
  const entries = await Promise.all(
    targets.map(async ({ client, path, alwaysThere }): Promise<[string, UpstreamReadiness]> => {
      const started = performance.now();
      try {
        const status = await client.probe(path, timeoutMs);
        const latencyMs = Math.round(performance.now() - started);
        if (status === 404 && alwaysThere) return [client.name, { reachable: false, status: 404, latencyMs, error: 'API_NOT_FOUND' }];
        return [client.name, { reachable: status < 500, status, latencyMs }];
      } catch (error) {
        const code = error instanceof UpstreamError ? error.code : 'UPSTREAM_UNAVAILABLE';
        return [client.name, { reachable: false, status: null, latencyMs: Math.round(performance.now() - started), error: code }];
      }
    }),
  );
  return Object.fromEntries(entries);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** Serves GET /healthz and /readyz; false for any other request. */
export function handleHealth(req: IncomingMessage, res: ServerResponse, options: HealthOptions): boolean {
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/healthz' && path !== '/readyz') return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return true;
  }
  if (path === '/healthz') {
    sendJson(res, 200, { status: 'ok' });
    return true;
  }
  if (options.shuttingDown()) {
    sendJson(res, 503, { status: 'shutting down', upstreams: {} });
    return true;
  }
  void Promise.all([checkReadiness(options.targets, options.timeoutMs), options.groupReady?.() ?? true]).then(
    ([upstreams, workers]) => {
      const ready = workers && Object.values(upstreams).every((u) => u.reachable);
      const redis = options.redisAnswering ? { redis: { answering: options.redisAnswering() } } : {};
      const status = !ready ? (workers ? 'not ready' : 'workers starting') : redis.redis?.answering === false ? 'degraded' : 'ready';
      sendJson(res, ready ? 200 : 503, { status, upstreams, ...redis });
    },
    () => sendJson(res, 503, { status: 'not ready', upstreams: {} }),
  );
  return true;
}
