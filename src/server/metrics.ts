/**
 * Prometheus metrics on `GET /metrics`, one registry per app: GraphQL
 * operations by name, type and outcome with their latency, upstream calls by
 * upstream, method, route template and status with theirs, and active
 * subscriptions and WebSocket connections.
 *
 * No label carries a credential: upstream routes are templates (http.ts),
 * and an operation name, which the client chooses, is replaced by
 * `redacted` when it contains a credential of its own request, and by
 * `other` past 64 characters or 500 distinct names.
 */
import type { CallerRequest, WarmOutcome } from './warm-answers.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CacheObserver } from '../upstreams/answer-cache.js';
import type { UpstreamCall } from '../upstreams/http.js';

type Outcome = 'success' | 'partial' | 'error';
type OperationLabels = { operation_name: string; operation_type: string };

const OPERATION_LABELS = ['operation_name', 'operation_type', 'outcome'] as const;
const UPSTREAM_LABELS = ['upstream', 'method', 'route', 'status'] as const;
const MAX_NAME_LENGTH = 64;
const MAX_NAMES = 500;
/** Request headers and query parameters that carry credentials. */
const CREDENTIAL_HEADERS = ['private-token', 'authorization', 'job-token', 'x-hubzilla-authorization', 'cookie'];
const CREDENTIAL_PARAMS = ['private_token', 'access_token', 'job_token'];

export interface MetricsOptions {
  /** Active WebSocket connections, read at scrape time. */
  websocketConnections?: () => number;
  /** Operations waiting for admission, read at scrape time. */
  operationsWaiting?: () => number;
  /** Also export the process's CPU, memory, event loop and GC metrics (once per process, e.g. in main). */
  processMetrics?: boolean;
  /** With workers: the whole group's metrics (prom-client's cluster aggregation, done by the primary) instead of this process's. */
  groupMetrics?: () => Promise<string>;
}

/** The secrets a request carries: header values, their Bearer/Basic payloads, a Basic password, credential query parameters. */
export function requestSecrets(request: CallerRequest | undefined): string[] {
  if (!request) return [];
  const secrets: string[] = [];
  for (const name of CREDENTIAL_HEADERS) {
    const value = request.headers.get(name);
    if (!value) continue;
    secrets.push(value);
    const scheme = /^(Bearer|Basic)\s+(\S+)$/i.exec(value.trim());
    if (scheme?.[2]) {
      secrets.push(scheme[2]);
      if (scheme[1]?.toLowerCase() === 'basic') {
        const decoded = Buffer.from(scheme[2], 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon >= 0) secrets.push(decoded.slice(colon + 1));
      }
    }
  }
  try {
    const url = new URL(request.url);
    for (const name of CREDENTIAL_PARAMS) for (const value of url.searchParams.getAll(name)) secrets.push(value);
  } catch {
    // A Request always has an absolute URL; nothing to add otherwise.
  }
  return secrets.filter((s) => s.length >= 4);
}

function outcomeOf(result: ExecutionResult & { incremental?: readonly { errors?: readonly unknown[] }[] }): Outcome {
  const errors = (result.errors?.length ?? 0) + (result.incremental ?? []).reduce((n, part) => n + (part.errors?.length ?? 0), 0);
  if (errors === 0) return 'success';
  return result.data ? 'partial' : 'error';
}

function worse(a: Outcome, b: Outcome): Outcome {
  const rank: Record<Outcome, number> = { success: 0, partial: 1, error: 2 };
  return rank[b] > rank[a] ? b : a;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly operations: Counter<(typeof OPERATION_LABELS)[number]>;
  private readonly operationSeconds: Histogram<(typeof OPERATION_LABELS)[number]>;
  private readonly upstreamCalls: Counter<(typeof UPSTREAM_LABELS)[number]>;
  private readonly upstreamSeconds: Histogram<(typeof UPSTREAM_LABELS)[number]>;
  private readonly activeSubscriptions: Gauge;
  private readonly cacheLookups: Counter<'upstream' | 'family' | 'outcome'>;
  private readonly warmAnswers: Counter<'outcome'>;
  private readonly warmReplays: Counter;
  private readonly cacheHitAge: Histogram<'upstream' | 'family'>;
  private readonly cacheEvictions: Counter;
  private readonly cacheInvalidations: Counter<'upstream' | 'cause'>;
  private readonly names = new Set<string>();

  constructor(private readonly options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.operations = new Counter({
      name: 'duograph_graphql_operations_total',
      help: 'GraphQL operations executed, by operation name, type and outcome (success, partial, error).',
      labelNames: OPERATION_LABELS,
      registers,
    });
    this.operationSeconds = new Histogram({
      name: 'duograph_graphql_operation_duration_seconds',
      help: 'Time from the start of execution to the last result of a GraphQL operation (a subscription: its whole life), by name, type and outcome.',
      labelNames: OPERATION_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.upstreamCalls = new Counter({
      name: 'duograph_upstream_requests_total',
      help: 'Calls sent to an upstream (each retry is one), by upstream, method, route template and status (or error code).',
      labelNames: UPSTREAM_LABELS,
      registers,
    });
    this.upstreamSeconds = new Histogram({
      name: 'duograph_upstream_request_duration_seconds',
      help: 'Time to the response headers of an upstream call, by upstream, method, route template and status (or error code).',
      labelNames: UPSTREAM_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    // The answer cache: labelled by upstream and resource family only, never a key, a path or a user.
    this.cacheLookups = new Counter({
      name: 'duograph_upstream_cache_lookups_total',
      help: 'Upstream GETs by how they were served: hit (a stored answer), revalidated (a 304 renewed one), joined (a read in flight), miss (sent and read in full); by upstream and resource family.',
      labelNames: ['upstream', 'family', 'outcome'],
      registers,
    });
    this.warmAnswers = new Counter({
      name: 'duograph_warm_answers_total',
      help: "Whole query answers kept per credential scope: served (again, without running the operation), renewed (served after the stored answers it used, read again, came back unchanged), shared (served as another scope built it, after this scope's own reads came back the same), patched (only the fields whose own reads changed resolved again), kept (after running it), stale (found, but something it was built from changed).",
      labelNames: ['outcome'],
      registers,
    });
    this.warmReplays = new Counter({
      name: 'duograph_warm_replays_total',
      help: 'Warm answers sent as the same request was answered before (its status, headers and bytes), without GraphQL handling the request again (also counted in duograph_warm_answers_total).',
      registers,
    });
    this.cacheHitAge = new Histogram({
      name: 'duograph_upstream_cache_hit_age_seconds',
      help: 'Age of the stored answers served, by upstream and resource family.',
      labelNames: ['upstream', 'family'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers,
    });
    this.cacheEvictions = new Counter({
      name: 'duograph_upstream_cache_evictions_total',
      help: 'Stored answers pushed out of the in-memory cache for room (CACHE_MAX_BYTES).',
      registers,
    });
    this.cacheInvalidations = new Counter({
      name: 'duograph_upstream_cache_invalidations_total',
      help: 'Drops of cached answers for every scope applied by this instance (its own and those other instances sent), by upstream and cause (webhook: a job or pipeline event; mutation: a write through the gateway).',
      labelNames: ['upstream', 'cause'],
      registers,
    });
    this.activeSubscriptions = new Gauge({
      name: 'duograph_subscriptions_active',
      help: 'GraphQL subscription executions running now: one per SSE subscription, one per WebSocket operation group (subscribers with the same credentials and operation share one).',
      registers,
    });
    // Read at scrape time from whoever keeps the count.
    const sampled = (name: string, help: string, read: (() => number) | undefined) => {
      if (!read) return;
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    };
    sampled('duograph_websocket_connections', 'Open graphql-ws WebSocket connections.', options.websocketConnections);
    sampled(
      'duograph_graphql_operations_waiting',
      'Queries and mutations waiting for their estimated upstream calls to fit in MAX_COST_IN_FLIGHT.',
      options.operationsWaiting,
    );
    // The event loop's delay sampled every 100 ms, not prom-client's 10: at 10 ms the sampling timer alone kept an idle
    // gateway at about 7 ms of CPU a second on a 2-core machine (under 1 at 100 ms); a stall of 100 ms or more is still seen.
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'duograph_', eventLoopMonitoringPrecision: 100 });
  }

  /** What the answer cache reports, counted. */
  cacheObserver(): CacheObserver {
    return {
      lookup: (upstream, family, outcome, ageMs) => {
        this.cacheLookups.inc({ upstream, family, outcome });
        if (ageMs !== undefined) this.cacheHitAge.observe({ upstream, family }, ageMs / 1000);
      },
      invalidation: (upstream, cause) => this.cacheInvalidations.inc({ upstream, cause }),
    };
  }

  /** A warm answer (warm-answers.ts) served, renewed, shared, kept, or found stale. */
  warmAnswer(outcome: WarmOutcome): void {
    this.warmAnswers.inc({ outcome });
  }

  /** A warm answer sent as a replay (warm-replays.ts). */
  warmReplayed(): void {
    this.warmReplays.inc();
  }

  /** A query answered warm, without running: still an operation, counted as one that succeeded. */
  operationServedWarm(operationName: string | undefined, request: CallerRequest, seconds: number): void {
    const labels = { operation_name: this.nameLabel(operationName, request), operation_type: 'query', outcome: 'success' as const };
    this.operations.inc(labels);
    this.operationSeconds.observe(labels, seconds);
  }

  /** One stored answer pushed out for room. */
  cacheEvicted(): void {
    this.cacheEvictions.inc();
  }

  /** Credential scopes (or routes) the gateway holds back after a 429, read at scrape time. */
  rateClosures(read: () => number): void {
    new Gauge({
      name: 'duograph_upstream_rate_limited_scopes',
      help: 'Credential scopes (or, for an endpoint limit, routes of one) whose calls are held back after a 429 until its Retry-After, here or heard from another instance.',
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Bytes the answer cache holds, read at scrape time. */
  cacheBytes(read: () => number): void {
    new Gauge({
      name: 'duograph_upstream_cache_bytes',
      help: 'Bytes the in-memory answer cache holds (0 when answers live in Redis).',
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** The `onCall` observer for an upstream HttpClient. */
  readonly observeUpstream = (call: UpstreamCall): void => {
    const labels = { upstream: call.upstream, method: call.method, route: call.route, status: String(call.status) };
    this.upstreamCalls.inc(labels);
    this.upstreamSeconds.observe(labels, call.durationMs / 1000);
  };

  /** The Envelop plugin that counts and times operations and tracks active subscriptions. */
  plugin(): Plugin {
    const start = (args: { document: DocumentNode; operationName?: string | null; contextValue: unknown }) => {
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      const labels = {
        operation_name: this.nameLabel(args.operationName ?? operation?.name?.value, (args.contextValue as { request?: Request }).request),
        operation_type: operation?.operation ?? 'unknown',
      };
      return { labels, started: performance.now() };
    };
    const finish = ({ labels, started }: { labels: OperationLabels; started: number }, outcome: Outcome) => {
      this.operations.inc({ ...labels, outcome });
      this.operationSeconds.observe({ ...labels, outcome }, (performance.now() - started) / 1000);
    };
    return {
      onExecute: ({ args }) => {
        const op = start(args);
        return {
          onExecuteDone: ({ result }) => {
            if (!isAsyncIterable(result)) return finish(op, outcomeOf(result));
            let outcome: Outcome = 'success';
            return { onNext: ({ result: next }) => void (outcome = worse(outcome, outcomeOf(next))), onEnd: () => finish(op, outcome) };
          },
        };
      },
      onSubscribe: ({ args }) => {
        const op = start(args);
        return {
          onSubscribeError: () => finish(op, 'error'),
          onSubscribeResult: ({ result }) => {
            if (!isAsyncIterable(result)) return finish(op, outcomeOf(result));
            this.activeSubscriptions.inc();
            let outcome: Outcome = 'success';
            return {
              onNext: ({ result: next }) => void (outcome = worse(outcome, outcomeOf(next))),
              onEnd: () => {
                this.activeSubscriptions.dec();
                finish(op, outcome);
              },
            };
          },
        };
      },
    };
  }

  /** Serves GET /metrics in Prometheus's text format; false for any other request. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if ((req.url ?? '').split('?')[0] !== '/metrics') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return true;
    }
    (this.options.groupMetrics?.() ?? this.registry.metrics()).then(
      (text) => {
        res.writeHead(200, { 'content-type': this.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500).end(),
    );
    return true;
  }

  private nameLabel(name: string | undefined, request: CallerRequest | undefined): string {
    if (!name) return 'anonymous';
    if (requestSecrets(request).some((secret) => name.includes(secret) || (name.length >= 8 && secret.includes(name)))) return 'redacted';
    if (name.length > MAX_NAME_LENGTH) return 'other';
    if (!this.names.has(name)) {
      if (this.names.size >= MAX_NAMES) return 'other';
      this.names.add(name);
    }
    return name;
  }
}
