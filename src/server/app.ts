/**
 * buildApp(): the Yoga app and its HTTP server, wired to the upstream
 * clients. Listens only when asked, so tests and main share it.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createFetch } from '@whatwg-node/fetch';
import { createGraphQLError, createYoga, type YogaServerInstance } from 'graphql-yoga';
import { apiBase, type Config, GITLAB_API_PATH, HUBZILLA_API_PATH } from '../config.js';
import { InputError } from '../errors.js';
import { newCacheUsage, type RequestScope, requestScopeFrom } from '../request-scope.js';
import type { Context } from '../schema/context.js';
import { buildSchema } from '../schema/index.js';
import { GitlabClient } from '../upstreams/gitlab/client.js';
import { GitlabLoaders } from '../upstreams/gitlab/loaders.js';
import { GITLAB_ROUTE_WORDS } from '../upstreams/gitlab/route-words.js';
import { HUBZILLA_ROUTE_WORDS } from '../upstreams/hubzilla/route-words.js';
import { HttpClient, type UpstreamCall } from '../upstreams/http.js';
import { AnswerCache } from '../upstreams/answer-cache.js';
import { type CacheStore, MemoryStore, RedisStore, storeClient } from '../upstreams/cache-store.js';
import { MinuteCounter } from '../upstreams/minute-counter.js';
import { RateBudget } from '../upstreams/rate-budget.js';
import { ANONYMOUS, GitlabIdentities } from '../upstreams/identities.js';
import { RateGate } from '../upstreams/rate-gate.js';
import { ConcurrencyLimiter, type ResiliencePolicy } from '../upstreams/resilience.js';
import { createMemoryEventBus, createRedisEventBus, type EventBus } from '../subscriptions/event-bus.js';
import { DEFAULT_WEBHOOK_QUIET_MS, SubscriptionHub } from '../subscriptions/hub.js';
import { gitlabCredentials, nearMissCredentials, useCredentialHints } from './credentials.js';
import { extensionMaxAgeMs, useCacheHeaders } from './cache-headers.js';
import { WarmAnswers } from './warm-answers.js';
import { WarmReplays } from './warm-replays.js';
import { InboundAllowance } from './inbound-limit.js';
import { clientAddress } from './client-address.js';
import { handleDownload } from './downloads.js';
import { createHubzillaContext } from './hubzilla-context.js';
import { handleHubzillaDownload } from './hubzilla-downloads.js';
import { GATEWAY_VERSION, type GraphqlAnswer, handleMcp } from './mcp.js';
import { buildTools, DEFAULT_TOOLS, readToolManifest } from './mcp-tools.js';
import { graphiqlPage, graphiqlTabs } from './graphiql.js';
import { checkReadiness, handleHealth, type UpstreamReadiness } from './health.js';
import { createLogger, logRequest, QUIET_PATHS, requestFields, useRequestIdOnErrors, yogaLogger, type Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { useMultipartSubscriptions } from './multipart-subscriptions.js';
import { SubscriptionCallbacks } from './subscription-callback.js';
import { InFlightRequests } from './shutdown.js';
import { useGetParameterChecks } from './get-params.js';
import { limitPlugins, readBoundedBody } from './limits.js';
import { useCompiledExecution } from './jit.js';
import { maskError } from './mask-error.js';
import { PersistedDocuments, readPersistedDocuments } from './persisted-documents.js';
import type { Tracing } from './tracing.js';
import { GITLAB_WEBHOOK_PATH, handleGitlabWebhook } from './webhooks.js';
import { attachWebSocket, type WebSocketEndpoint } from './websocket.js';

export interface AppOptions {
  config: Config;
  /** Base URL of GitLab (without /api/v4). */
  gitlabUrl: URL;
  /** Base URL of Hubzilla (without /api/z/1.0); without it Hubzilla fields fail with UPSTREAM_UNAVAILABLE. */
  hubzillaUrl?: URL;
  /** Headers GraphiQL opens with, e.g. the sandbox's demo token. */
  graphiqlHeaders?: Record<string, string>;
  /** Reports background failures (pollers, Redis); never given a credential. Default: the logger, at warn. */
  log?: (message: string) => void;
  /** The JSON logger; default: one from LOG_LEVEL and LOG_FILE. */
  logger?: Logger;
  /** Also export process metrics (CPU, memory, event loop) on /metrics; main sets it, tests need not. */
  processMetrics?: boolean;
  /** How often a webhook-fed poller checks its credentials (the hub's default, 60 s, unless a test shortens it). */
  accessRecheckMs?: number;
  /** Traces (tracing.ts), when an OTLP endpoint is configured; main starts it before the app. */
  tracing?: Tracing | null;
  /** The clock cached upstream answers are aged by; tests move it. Default Date.now. */
  now?: () => number;
  /** In a worker of a group (WORKERS > 1): the bus through the primary, and the group's readiness and metrics. */
  worker?: { bus: EventBus; groupReady: () => Promise<boolean>; groupMetrics: () => Promise<string> };
}

export interface App {
  yoga: YogaServerInstance<Record<string, unknown>, Context>;
  server: Server;
  /** The GitLab upstream client, whose `calls` counts upstream calls. */
  gitlab: HttpClient;
  /** The Hubzilla upstream client (null when none is configured), whose `calls` counts upstream calls. */
  hubzilla: HttpClient | null;
  /** Subscriptions: pollers, streams and bus topics (see `hub.stats()`). */
  hub: SubscriptionHub;
  /** graphql-ws on the GraphQL path. */
  websocket: WebSocketEndpoint;
  /** URL GitLab should post webhooks to: PUBLIC_URL's, else the listening address's; null before listening. */
  webhookUrl(): string | null;
  /** Starts listening; resolves with the URL of the server. */
  listen(port: number, host?: string): Promise<URL>;
  /** The JSON logger (credentials redacted). */
  logger: Logger;
  /** Prometheus metrics, served on /metrics. */
  metrics: Metrics;
  /** HTTP requests being served now. */
  inFlight: InFlightRequests;
  /** Looks at each upstream's API once, as /readyz does (outside every budget): what the start banner says of it. */
  checkUpstreams(): Promise<Record<string, UpstreamReadiness>>;
  /**
   * Shuts down gracefully: /readyz turns 503, the server stops accepting
   * connections, WebSocket clients get close code 1001 (going away) and
   * subscriptions end, requests in flight finish (up to SHUTDOWN_TIMEOUT_MS,
   * then their connections are cut), then the upstream pools close.
   */
  close(): Promise<void>;
}

/**
 * How long a poller's lease lasts without renewal: the longest poll interval,
 * within 2 to 30 s. A holder that dies is replaced within that long.
 */
export function leaseTtlMs(config: Config): number {
  return Math.min(30_000, Math.max(2_000, config.pollMaxIntervalMs));
}

/** The resilience policy (upstreams/resilience.ts) both upstreams get from the config; each has its own breaker and limiter. */
export function upstreamPolicy(config: Config): Partial<ResiliencePolicy> {
  return {
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    headersTimeoutMs: config.upstreamHeadersTimeoutMs ?? config.upstreamTimeoutMs,
    bodyTimeoutMs: config.upstreamBodyTimeoutMs ?? config.upstreamTimeoutMs,
    deadlineMs: config.upstreamTimeoutMs,
    retries: config.upstreamRetries,
    retryBaseMs: config.upstreamRetryBaseMs,
    retryMaxDelayMs: config.upstreamRetryMaxDelayMs,
    breakerThreshold: config.breakerThreshold,
    breakerResetMs: config.breakerResetMs,
    maxConcurrency: config.upstreamMaxConcurrency,
  };
}

export function buildApp(options: AppOptions): App {
  const { config } = options;
  const logger = options.logger ?? createLogger({ level: config.logLevel, file: config.logFile });
  // Estimated upstream calls of the operations running at once: each call started holds memory until its answer is read.
  const budget = config.maxCostInFlight > 0 ? new ConcurrencyLimiter(config.maxCostInFlight) : null;
  const metrics = new Metrics({
    websocketConnections: () => websocket.connections,
    operationsWaiting: () => budget?.queued ?? 0,
    processMetrics: options.processMetrics ?? false,
    groupMetrics: options.worker?.groupMetrics,
  });
  const inFlight = new InFlightRequests();
  // Routers' subscriptions in the HTTP callback protocol, POSTed only to the callback URLs an operator allowed.
  const callbacks = new SubscriptionCallbacks({
    allowed: config.subscriptionCallbackUrls,
    timeoutMs: Math.min(config.upstreamTimeoutMs, 10_000),
    log: (message, fields) => logger.warn(fields, message),
  });
  const tracing = options.tracing ?? null;
  // One debug line per upstream call, with the gateway's request id (the logger's mixin) and the upstream's own.
  const onCall = (call: UpstreamCall) => {
    metrics.observeUpstream(call);
    inbound?.charge(call.scope, call.chargeTo);
    if (!logger.isLevelEnabled('debug')) return;
    const { upstream, method, route, status, upstreamRequestId, cause } = call;
    logger.debug(
      { ...requestFields(call.scope), upstream, method, route, status, durationMs: Math.round(call.durationMs), upstreamRequestId, cause },
      'upstream call',
    );
  };
  let shuttingDown = false;
  let stopGaps: () => void = () => {};
  let closing: Promise<void> | null = null;
  const log = options.log ?? ((message: string) => logger.warn(message));
  // Redis reaches every instance and every worker; without it, a worker's events go through its primary.
  const bus: EventBus = config.redisUrl
    ? createRedisEventBus(config.redisUrl, log, undefined, leaseTtlMs(config))
    : (options.worker?.bus ?? createMemoryEventBus());
  const keySecret = fleetSecret(config);
  const cache = answerCache(config, keySecret, metrics, log, options.now);
  // Answers of whole queries, over the stored upstream answers (where those are stored at all); and GET answers' ETags.
  const warm = new WarmAnswers({
    cache,
    keySecret,
    // A quarter of the room for answers of whole requests: three sixteenths kept answers, a sixteenth replays of them.
    maxBytes: (config.cacheMaxBytes * 3) / 16,
    now: options.now,
    observe: (outcome) => metrics.warmAnswer(outcome),
    onServed: (name, request, seconds) => metrics.operationServedWarm(name, request, seconds),
    // The caller's own credentials, as its operation would send them.
    reread: async (call, caller, scope) => {
      let credentials: Record<string, string>;
      try {
        credentials = gitlabCredentials(caller.headers, new URL(caller.url));
      } catch {
        return null;
      }
      return gitlab.reread(call, credentials, scope, caller.signal);
    },
  });
  // A trace of a replayed request would miss its operation's span: with tracing on, every request goes through Yoga.
  const replays = tracing ? null : new WarmReplays({ warm, keySecret, maxBytes: config.cacheMaxBytes / 16, onReplayed: () => metrics.warmReplayed() });
  // Cursors the gateway signs (Hubzilla's exact thread pages): every instance of a fleet reads another's.
  const cursorKey = createHmac('sha256', keySecret).update('duograph cursors').digest('base64url');
  const identities = new GitlabIdentities(options.now);
  const gate = new RateGate(options.now, (credentials) => identities.known(credentials));
  metrics.rateClosures(() => gate.closures);
  const budgetRedis = config.redisUrl ? storeClient(config.redisUrl, 'duograph-budget', log) : null;
  const callBudget = new RateBudget({
    perMinute: config.gitlabRateLimitPerMinute,
    reserve: config.rateLimitReserve,
    anonymousShare: config.anonymousSharePerAddress,
    redis: budgetRedis,
    now: options.now,
  });
  const inbound: InboundAllowance | null = config.inboundCallsPerMinute
    ? new InboundAllowance(
        config.inboundCallsPerMinute,
        new MinuteCounter({ prefix: 'duograph:inbound', redis: budgetRedis, now: options.now }),
        async (context): Promise<string> => {
          const who: string | null = await gitlab.whoIs(context.live.credentials, context.scope);
          if (who !== null && who !== ANONYMOUS) return `gitlab:${who}`;
          const channel = context.hubzilla.client.verifiedScope;
          return channel === null ? `address:${context.scope.clientAddress ?? 'unknown'}` : `hubzilla:${channel}`;
        },
      )
    : null;
  const gitlab: HttpClient = new HttpClient({
    name: 'gitlab',
    baseUrl: apiBase(options.gitlabUrl, GITLAB_API_PATH),
    timeoutMs: config.upstreamTimeoutMs,
    connections: config.upstreamConnections,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    policy: upstreamPolicy(config),
    onCall,
    routeWords: GITLAB_ROUTE_WORDS,
    tracer: tracing?.upstream,
    cache,
    gate,
    budget: callBudget,
    identities,
    chargeOf: (credentials): string | undefined => inbound?.keyOfCredentials(credentials),
  });
  const hubzilla = options.hubzillaUrl
    ? new HttpClient({
        name: 'hubzilla',
        baseUrl: apiBase(options.hubzillaUrl, HUBZILLA_API_PATH),
        timeoutMs: config.upstreamTimeoutMs,
        connections: config.upstreamConnections,
        maxResponseBytes: config.upstreamMaxResponseBytes,
        policy: upstreamPolicy(config),
        onCall,
        routeWords: HUBZILLA_ROUTE_WORDS,
        tracer: tracing?.upstream,
        cache,
        gate,
        now: options.now,
      })
    : null;
  const schema = buildSchema();
  if (tracing && config.traceResolvers.length) tracing.traceResolvers(schema, config.traceResolvers);
  const persisted = config.persistedDocuments
    ? new PersistedDocuments(config.persistedDocumentsOnly, readPersistedDocuments(config.persistedDocuments), schema)
    : null;
  // Checked at start, as trusted documents are: a manifest that does not fit the schema fails the start.
  // Where only trusted documents run, only tools that name one are offered (the shipped tools are not trusted documents).
  const mcpTools = buildTools(schema, config.mcpTools ? readToolManifest(config.mcpTools) : DEFAULT_TOOLS, config.mcpMutations, (id) =>
    persisted?.textOf(id),
  ).filter((tool) => !config.persistedDocumentsOnly || tool.documentId !== null);
  const hub = new SubscriptionHub({
    http: gitlab,
    bus,
    pollIntervalMs: config.pollIntervalMs,
    pollMaxIntervalMs: config.pollMaxIntervalMs,
    logReadBytesPerSecond: config.logReadBytesPerSecond,
    accessRecheckMs: options.accessRecheckMs,
    log,
  });
  // Without a configured secret, one per process: enough for one instance and the hooks it registers itself.
  const webhookSecret = config.gitlabWebhookSecret ?? randomBytes(32).toString('base64url');
  let listeningOrigin: string | null = null;
  const webhookUrl = () => {
    const base = config.publicUrl?.href.replace(/\/$/, '') ?? listeningOrigin;
    return base === null ? null : `${base}${GITLAB_WEBHOOK_PATH}`;
  };

  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Bodies are bounded before Yoga (readBoundedBody, and formDataLimits for uploads); Yoga's own
    // bound re-streams every body through a transform, a few percent of a small query's CPU.
    maxRequestBodySize: false,
    logging: yogaLogger(logger),
    maskedErrors: { maskError, isDev: false },
    // GraphiQL is served by graphiql.ts, compressed and cached, before Yoga sees the request.
    graphiql: false,
    // Multipart uploads: bounded here, before any resolver runs.
    fetchAPI: createFetch({ formDataLimits: { fileSize: config.maxUploadBytes, files: 10, fieldSize: 1024 * 1024, fields: 100 } }),
    // Multipart and GET requests need a header a cross-site form cannot send.
    plugins: [
      // Trusted documents first: a refused request costs nothing further.
      ...(persisted ? [persisted.plugin()] : []),
      useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf', 'graphql-preflight', 'apollo-require-preflight'] }),
      useGetParameterChecks(),
      // After the checks that refuse a request; before anything that parses or runs the operation.
      warm.plugin(),
      // @defer and @stream: slow fields (traces, languages, forks' parents) arrive in later parts of a multipart response.
      useDeferStream(),
      // Subscriptions over HTTP in Apollo's multipart protocol (Apollo Client's HttpLink), beside SSE and graphql-ws.
      useMultipartSubscriptions(),
      // Subscriptions a router asks for with a callback URL (callback/1.0): events POSTed there, not streamed back.
      callbacks.plugin(),
      useCompiledExecution(),
      // After the compiled executor: a patched answer is resolved by its own.
      warm.patchPlugin(),
      metrics.plugin(),
      useRequestIdOnErrors(),
      useCacheHeaders((request) => warm.etagOf(request)),
      useCredentialHints(),
      // Before the limits, so that an operation they refuse still has its span, with the refusal's code.
      ...(tracing ? [tracing.plugin()] : []),
      // Depth, aliases, tokens, directives, cost in upstream calls, no field suggestions: refused before any resolver runs.
      ...limitPlugins(config, budget),
      // After the cost limit: it judges an operation by the cost that plugin estimated.
      ...(inbound ? [inbound.plugin()] : []),
      // Last: what it keeps to send again is the response every other plugin made.
      ...(replays ? [replays.plugin()] : []),
    ],
    context: ({ request, scope: given, params }) => {
      // One scope per operation (a batch has several), from the request's: the operation's span is its own.
      const scope: RequestScope = { ...((given as RequestScope | undefined) ?? requestScopeFrom(Object.fromEntries(request.headers))) };
      // Over HTTP the request's usage (its response headers read it); over graphql-ws, the operation's own.
      scope.cache ??= newCacheUsage();
      const askedMaxAgeMs = extensionMaxAgeMs(params?.extensions);
      if (askedMaxAgeMs !== undefined) scope.cacheMaxAgeMs = askedMaxAgeMs;
      let credentials: Record<string, string>;
      try {
        credentials = gitlabCredentials(request.headers, new URL(request.url));
      } catch (error) {
        if (error instanceof InputError) {
          throw createGraphQLError(error.message, { extensions: { code: error.code, http: { status: 400 } } });
        }
        throw error;
      }
      const missed = nearMissCredentials(request.headers.keys());
      if (missed.length > 0) scope.ignoredCredentials = [...new Set([...(scope.ignoredCredentials ?? []), ...missed])];
      const client = new GitlabClient(gitlab, credentials, request.signal, scope);
      return {
        scope,
        gitlab: { client, loaders: new GitlabLoaders(client) },
        hubzilla: createHubzillaContext(hubzilla, request.headers, request.signal, scope),
        defaultPageSize: config.defaultPageSize,
        cursorKey,
        live: {
          hub,
          credentials,
          signal: request.signal,
          requireCredentials: config.requireCredentials,
          receiver: { url: webhookUrl, secret: webhookSecret, signingToken: config.gitlabWebhookSigningToken },
        },
      };
    },
  });

  const tabs = graphiqlTabs(options.graphiqlHeaders ?? {});
  const graphiql = graphiqlPage({
    path: '/graphql',
    // Every document GraphiQL sends would be refused.
    offReason: persisted?.only
      ? 'GraphiQL is off: this gateway runs trusted documents only (PERSISTED_DOCUMENTS_ONLY). Send the id of a persisted document to /graphql.'
      : undefined,
    render: {
      title: 'duograph',
      defaultTabs: tabs,
      // The headers of a tab opened by hand, or from a ?query= link.
      headers: tabs[0]?.headers,
      shouldPersistHeaders: false,
      // Its subscriptions go over SSE as GETs, which CSRF prevention refuses without this header (GraphiQL is same-origin).
      additionalHeaders: { 'GraphQL-Preflight': '1' },
    },
  });

  const addressOf = clientAddress(config.trustedProxies);
  const server = createServer((req, res) => {
    const scope = requestScopeFrom(req.headers);
    scope.clientAddress = addressOf(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    scope.cache = newCacheUsage();
    res.setHeader('x-request-id', scope.requestId);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (tracing && !QUIET_PATHS.has(path)) tracing.serve(req, res, routeOf(path), scope);
    handle(req, res, scope);
  });
  const handle = (req: IncomingMessage, res: ServerResponse, scope: RequestScope) => {
    inFlight.track(res);
    logRequest(logger, req, res, scope);
    // Clients should take their next request to another instance.
    if (shuttingDown) res.setHeader('connection', 'close');
    if (
      handleHealth(req, res, {
        targets: readinessTargets,
        timeoutMs: Math.min(config.upstreamTimeoutMs, 5_000),
        shuttingDown: () => shuttingDown,
        groupReady: options.worker?.groupReady,
        redisAnswering: bus.answering,
      })
    )
      return;
    if (metrics.handle(req, res)) return;
    if (
      handleGitlabWebhook(req, res, {
        secret: webhookSecret,
        signingToken: config.gitlabWebhookSigningToken,
        maxBytes: config.webhookMaxBytes,
        hub,
        cache,
        log,
      })
    )
      return;
    if (handleDownload(req, res, gitlab, scope) || handleHubzillaDownload(req, res, hubzilla, scope)) return;
    if (
      handleMcp(req, res, {
        tools: mcpTools,
        explore: config.mcpExplore ? { schema, mutations: config.mcpMutations } : null,
        live: !config.persistedDocumentsOnly,
        allowedOrigins: config.publicUrl ? [...config.mcpAllowedOrigins, config.publicUrl.origin] : config.mcpAllowedOrigins,
        maxBodyBytes: config.maxBodyBytes,
        version: GATEWAY_VERSION,
        subscribe: async (operation, headers, signal) =>
          await yoga.fetch(
            `http://gateway${yoga.graphqlEndpoint}`,
            {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
              body: JSON.stringify(operation),
              signal,
            },
            { scope },
          ),
        execute: async (operation, headers) => {
          // Through the GraphQL endpoint in this process, as the same request: its limits, costs, metrics and request id.
          const response = await yoga.fetch(
            `http://gateway${yoga.graphqlEndpoint}`,
            {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
              body: JSON.stringify(operation),
            },
            { scope },
          );
          const text = await response.text();
          let body: GraphqlAnswer['body'] = null;
          try {
            body = JSON.parse(text) as GraphqlAnswer['body'];
          } catch {
            // Not JSON: the status says what went wrong.
          }
          return { status: response.status, body };
        },
      })
    )
      return;
    if (graphiql.handle(req, res)) return;
    if ((req.url ?? '/').split('?', 1)[0] !== yoga.graphqlEndpoint) {
      // Not an empty 404: whoever opened the bare address learns where the graph is.
      req.resume();
      const body = JSON.stringify({ errors: [{ message: `Nothing here. GraphQL is at ${yoga.graphqlEndpoint} (GraphiQL, in a browser).` }] });
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    // Yoga has no body size limit of its own: a JSON body is read here, capped; multipart is capped by formDataLimits.
    const answer = async () => {
      if (!(await replays?.serve(req, res, scope))) await yoga(req, res, { scope });
    };
    if (req.method === 'POST' && !/^multipart\//i.test(req.headers['content-type'] ?? '')) {
      void readBoundedBody(req, res, config.maxBodyBytes).then(async (ok) => {
        if (ok) await answer();
      });
      return;
    }
    void answer();
  };
  // Unauthenticated GETs both upstreams answer cheaply (GitLab with 401 on private instances: still up).
  const readinessTargets = [
    { client: gitlab, path: ['version'], alwaysThere: true },
    ...(hubzilla ? [{ client: hubzilla, path: ['version'], alwaysThere: true }] : []),
  ];
  const websocket = attachWebSocket({
    server,
    yoga,
    requireCredentials: config.requireCredentials,
    persisted,
    verify: (credentials) => new GitlabClient(gitlab, credentials).verifyCredentials(),
    clientAddress: addressOf,
  });
  return {
    yoga,
    server,
    gitlab,
    hubzilla,
    hub,
    websocket,
    webhookUrl,
    logger,
    metrics,
    inFlight,
    checkUpstreams: () => checkReadiness(readinessTargets, Math.min(config.upstreamTimeoutMs, 5_000)),
    listen: async (port, host) => {
      await bus.ready();
      // Said once Redis is reached, so a Redis that cannot be is the first thing an operator reads.
      if (config.cacheStore === 'redis' && !config.cacheKeySecret && !config.gitlabWebhookSecret) {
        log('cache: neither CACHE_KEY_SECRET nor GITLAB_WEBHOOK_SECRET is set, so this instance keys the Redis cache alone and shares no entry with others');
      }
      // Only now: a Redis subscription asked for before Redis is reached fails unheard.
      cache.listen(bus.shared);
      gate.listen(bus.shared);
      stopGaps = bus.onGap?.((answering, lost, missed) => cache.gap(answering, lost, missed)) ?? stopGaps;
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address() as AddressInfo;
          const shown = host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost';
          // Webhooks from a sandbox on this machine: a literal loopback address, since "localhost" may resolve to ::1 first.
          const loopback = host === '::' ? '::1' : !host || host === '0.0.0.0' ? '127.0.0.1' : host;
          listeningOrigin = `http://${loopback.includes(':') ? `[${loopback}]` : loopback}:${address.port}`;
          resolve(new URL(`http://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}/graphql`));
        });
      });
    },
    // Idempotent: SIGTERM and a test's cleanup may both ask.
    close: () => (closing ??= shutdown()),
  };
  async function shutdown(): Promise<void> {
    shuttingDown = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await websocket.close();
    // Ends every subscription stream: SSE responses complete, pollers stop.
    hub.close();
    // Routers hear `complete` for each callback subscription before the connections to them close.
    await callbacks.close(config.shutdownTimeoutMs);
    const drained = await inFlight.idle(config.shutdownTimeoutMs);
    if (!drained) logger.warn({ inFlight: inFlight.size }, 'shutdown: cutting requests still in flight');
    server.closeAllConnections();
    await closed;
    gate.stop();
    budgetRedis?.disconnect();
    stopGaps();
    await cache.close();
    await bus.close();
    await gitlab.close();
    await hubzilla?.close();
    await tracing?.shutdown();
    logger.info('shutdown complete');
  }
}

/**
 * The answer cache both upstreams share: its store (this process, or Redis
 * for a fleet) and the secret that keys its digests. Without CACHE_KEY_SECRET
 * the webhook secret, which a fleet already shares, derives one; without
 * either, each process has its own, and instances cannot share entries.
 */
/** The secret every instance of a fleet shares (CACHE_KEY_SECRET, else derived from GITLAB_WEBHOOK_SECRET), else one of this process. */
function fleetSecret(config: Config): string {
  return (
    config.cacheKeySecret ??
    (config.gitlabWebhookSecret
      ? createHmac('sha256', config.gitlabWebhookSecret).update('duograph answer cache keys').digest('base64url')
      : randomBytes(32).toString('base64url'))
  );
}

function answerCache(config: Config, keySecret: string, metrics: Metrics, log: (message: string) => void, now: (() => number) | undefined): AnswerCache {
  const store: CacheStore =
    config.cacheStore === 'redis' && config.redisUrl
      ? new RedisStore(config.redisUrl, log, config.cacheMaxBytes)
      : new MemoryStore(config.cacheMaxBytes, () => metrics.cacheEvicted(), now);
  metrics.cacheBytes(() => store.bytes());
  return new AnswerCache({
    store,
    keySecret,
    maxAgeMs: config.cacheMaxAgeMs,
    webhookMaxAgeMs: config.cacheWebhookMaxAgeMs,
    webhookQuietMs: DEFAULT_WEBHOOK_QUIET_MS,
    observer: metrics.cacheObserver(),
    now,
  });
}

/** The route of a request path for its span: a known path, or a download's first segments; never an id or a path of GitLab's. */
function routeOf(path: string): string {
  if (path === '/graphql' || path === GITLAB_WEBHOOK_PATH) return path;
  const download = /^\/downloads\/([a-z]+)\/([a-z]+)\//.exec(path);
  if (download) return `/downloads/${download[1]}/${download[2]}/*`;
  return 'other';
}
