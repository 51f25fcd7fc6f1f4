/**
 * The gateway's configuration: the only module that reads process.env. Every
 * value is validated once at start-up; a bad value throws a ConfigError whose
 * message names the variable and fits on one line.
 */
import { availableParallelism } from 'node:os';
import { isIPv4, isIPv6 } from 'node:net';

export interface Config {
  /** TCP port of the gateway (PORT, --port). Default 4000. */
  readonly port: number;
  /** Interface to listen on (HOST, --host). Default 0.0.0.0. */
  readonly host: string;
  /** Base URL of the GitLab upstream (GITLAB_URL, --gitlab-url); null starts the sandbox. */
  readonly gitlabUrl: URL | null;
  /** Base URL of the Hubzilla upstream, without /api/z/1.0 (HUBZILLA_URL, --hubzilla-url); null starts the sandbox. */
  readonly hubzillaUrl: URL | null;
  /** Deadline of one upstream call, retries, back-off and queueing included, in ms (UPSTREAM_TIMEOUT_MS); also the headers and body timeouts unless those are set. Default 10,000. */
  readonly upstreamTimeoutMs: number;
  /** Time to open a connection to an upstream, in ms (UPSTREAM_CONNECT_TIMEOUT_MS); capped by the deadline. Default 5,000. */
  readonly upstreamConnectTimeoutMs: number;
  /** Time from request to response headers, in ms (UPSTREAM_HEADERS_TIMEOUT_MS); null: UPSTREAM_TIMEOUT_MS. */
  readonly upstreamHeadersTimeoutMs: number | null;
  /** Longest pause between two body chunks, in ms (UPSTREAM_BODY_TIMEOUT_MS); null: UPSTREAM_TIMEOUT_MS. */
  readonly upstreamBodyTimeoutMs: number | null;
  /** Extra attempts of a GET after a connection error, 429 or 502/503/504, within the deadline (UPSTREAM_RETRIES); writes never retry. Default 2. */
  readonly upstreamRetries: number;
  /** First back-off step before a retry, doubled per attempt with full jitter, in ms (UPSTREAM_RETRY_BASE_MS). Default 100. */
  readonly upstreamRetryBaseMs: number;
  /** Longest wait before a retry, Retry-After included, in ms (UPSTREAM_RETRY_MAX_DELAY_MS); a longer Retry-After fails at once. Default 2,000. */
  readonly upstreamRetryMaxDelayMs: number;
  /** Consecutive failed calls (connection errors, timeouts, 502/503/504) that open an upstream's circuit breaker (BREAKER_THRESHOLD); 0 turns it off. Default 5. */
  readonly breakerThreshold: number;
  /** How long an open breaker fails calls fast before one probe may go through, in ms (BREAKER_RESET_MS). Default 10,000. */
  readonly breakerResetMs: number;
  /** Calls in flight at once per upstream; more wait within their deadline (UPSTREAM_MAX_CONCURRENCY). Default 128: one page of 100 items fans out in one wave. */
  readonly upstreamMaxConcurrency: number;
  /** Deepest selection an operation may have, introspection aside (MAX_DEPTH). Default 15. */
  readonly maxDepth: number;
  /** Most aliases in one operation (MAX_ALIASES). Default 30. */
  readonly maxAliases: number;
  /** Most tokens in one GraphQL document (MAX_TOKENS). Default 2,000. */
  readonly maxTokens: number;
  /** Most directives in one operation (MAX_DIRECTIVES). Default 20. */
  readonly maxDirectives: number;
  /** Largest non-multipart GraphQL request body, in bytes (MAX_BODY_BYTES); larger is 413. Default 1 MiB. */
  readonly maxBodyBytes: number;
  /** Most upstream calls an operation may be estimated to cause (MAX_COST); more is refused before it runs. Default 2,000. */
  readonly maxCost: number;
  /** Estimated upstream calls of the queries and mutations running at once (MAX_COST_IN_FLIGHT); the next waits its turn. 0: no limit. Default 4,096. */
  readonly maxCostInFlight: number;
  /** Let "Did you mean …?" suggestions name schema fields in errors (FIELD_SUGGESTIONS). Default false. */
  readonly fieldSuggestions: boolean;
  /** Keep-alive connections per upstream pool (UPSTREAM_CONNECTIONS). Default 128, as many as a page's fan-out. */
  readonly upstreamConnections: number;
  /** Largest upstream JSON body accepted, in bytes (UPSTREAM_MAX_RESPONSE_BYTES). Default 32 MiB. */
  readonly upstreamMaxResponseBytes: number;
  /** Largest file a multipart upload may carry, in bytes (MAX_UPLOAD_BYTES). Default 100 MiB. */
  readonly maxUploadBytes: number;
  /** Page size when a connection is asked with neither first nor last (DEFAULT_PAGE_SIZE). Default 20. */
  readonly defaultPageSize: number;
  /** Latency added by the sandbox to each response, in ms (SANDBOX_LATENCY_MS). Default 0. */
  readonly sandboxLatencyMs: number;
  /** Port of the sandbox GitLab (SANDBOX_GITLAB_PORT); 0 picks a free one. */
  readonly sandboxGitlabPort: number;
  /** Port of the sandbox Hubzilla (SANDBOX_HUBZILLA_PORT); 0 picks a free one. */
  readonly sandboxHubzillaPort: number;
  /** The Hubzilla release the sandbox plays (SANDBOX_HUBZILLA_VERSION): 8.8 or 10. Default 8.8. */
  readonly sandboxHubzillaVersion: SandboxHubzillaVersion;
  /** Refuse WebSocket connections (at connection_init) and subscriptions that carry no valid GitLab credential (REQUIRE_CREDENTIALS). Default false. */
  readonly requireCredentials: boolean;
  /** Secret GitLab sends in X-Gitlab-Token to /webhooks/gitlab (GITLAB_WEBHOOK_SECRET); null: a random one per process, fine for one instance. */
  readonly gitlabWebhookSecret: string | null;
  /** The Standard Webhooks signing token GitLab signs deliveries with (GITLAB_WEBHOOK_SIGNING_TOKEN, `whsec_<base64>`); null: X-Gitlab-Token only. */
  readonly gitlabWebhookSigningToken: string | null;
  /** Largest webhook body accepted, in bytes (WEBHOOK_MAX_BYTES); larger is 413. Default 5 MiB. */
  readonly webhookMaxBytes: number;
  /** First interval of a shared job poller, in ms (POLL_INTERVAL_MS); reset on every change. Default 5,000. */
  readonly pollIntervalMs: number;
  /** Longest interval a poller backs off to when nothing changes or the upstream fails (POLL_MAX_INTERVAL_MS). Default 60,000. */
  readonly pollMaxIntervalMs: number;
  /** Bytes one live job log may read per second from a GitLab that sends the whole log each time (LOG_READ_BYTES_PER_SECOND); 0 = no bound. Default 1 MiB. */
  readonly logReadBytesPerSecond: number;
  /** Redis for pub/sub and webhook dedup across instances (REDIS_URL, redis:// or rediss://); null keeps both in memory. */
  readonly redisUrl: string | null;
  /** Plain maximum age of a cached upstream answer, in ms (CACHE_MAX_AGE_MS); 0 stores nothing (reads in flight are still shared). Default 5,000. */
  readonly cacheMaxAgeMs: number;
  /** Maximum age of the job and pipeline answers of a project whose webhooks reach the gateway, in ms (CACHE_WEBHOOK_MAX_AGE_MS). Default 60,000. */
  readonly cacheWebhookMaxAgeMs: number;
  /** Bytes the in-memory answer cache may hold (CACHE_MAX_BYTES); least recently used out first. Default 64 MiB. */
  readonly cacheMaxBytes: number;
  /** Where cached answers live (CACHE_STORE): `memory`, or `redis` (REDIS_URL's, shared by the fleet). Default: redis with REDIS_URL, else memory. */
  readonly cacheStore: 'memory' | 'redis';
  /** GitLab calls a GitLab user (or the anonymous callers) may make per minute (GITLAB_RATE_LIMIT_PER_MINUTE); null: only the limit GitLab's RateLimit-Limit headers announce. */
  readonly gitlabRateLimitPerMinute: number | null;
  /** Share of each minute's budget that background work (pollers, log watches) leaves to callers (RATE_LIMIT_RESERVE), 0 to 0.9. Default 0.2. */
  readonly rateLimitReserve: number;
  /** Upstream calls each caller (a GitLab user, a verified Hubzilla channel, else a client address) may cause per minute (INBOUND_CALLS_PER_MINUTE); an operation estimated at more than is left is refused with 429. null (default): no allowance. */
  readonly inboundCallsPerMinute: number | null;
  /** The share of GitLab's anonymous budget one client address may spend per minute (ANONYMOUS_SHARE_PER_ADDRESS), 0.01 to 1. Default 0.25. */
  readonly anonymousSharePerAddress: number;
  /** Peers whose X-Forwarded-For names the client (TRUSTED_PROXIES): addresses and CIDR ranges. Default none: the peer is the client. */
  readonly trustedProxies: readonly string[];
  /** API requests per minute the sandbox GitLab allows each user (SANDBOX_RATE_LIMIT_PER_MINUTE), as GitLab's throttles; 0 never throttles. Default 0. */
  readonly sandboxRateLimitPerMinute: number;
  /** Keys the digest of cache keys (CACHE_KEY_SECRET): the same on every instance sharing a Redis cache. null: derived from GITLAB_WEBHOOK_SECRET, else random per process. */
  readonly cacheKeySecret: string | null;
  /** Public base URL of the gateway, used when registering its webhook on a project (PUBLIC_URL); null: the listening address. */
  readonly publicUrl: URL | null;
  /** Least severe log level written (LOG_LEVEL): fatal, error, warn, info, debug, trace or silent. Default info. */
  readonly logLevel: LogLevel;
  /** File the JSON logs are appended to (LOG_FILE); null writes them to stdout. */
  readonly logFile: string | null;
  /** Longest wait for in-flight requests on SIGTERM before their connections are cut, in ms (SHUTDOWN_TIMEOUT_MS). Default 10,000. */
  readonly shutdownTimeoutMs: number;
  /** How far V8 lets the old generation grow past what a full collection keeps, in percent (HEAP_GROWING_PERCENT); 0 leaves V8's own factor (up to 300). Default 100. */
  readonly heapGrowingPercent: number;
  /** Gateway processes sharing the port (WORKERS, --workers): a number, or `auto` for the available cores. Default 1. */
  readonly workers: number;
  /** GraphiQL opens with the sandbox's demo credentials (SANDBOX_CREDENTIALS): set by a primary for its workers when it runs the sandbox. */
  readonly sandboxCredentials: boolean;
  /** Trusted documents: a JSON file, or a folder of them, mapping ids to operations (PERSISTED_DOCUMENTS); null: none. */
  readonly persistedDocuments: string | null;
  /** The MCP tools: a JSON manifest of operations with descriptions (MCP_TOOLS); null: the tools that ship. */
  readonly mcpTools: string | null;
  /** Offer the manifest's mutations as MCP tools (MCP_MUTATIONS). Default false: read tools only. */
  readonly mcpMutations: boolean;
  /** Offer the exploration tools at /mcp: the schema by type, validate an operation, run one (MCP_EXPLORE). Default false. */
  readonly mcpExplore: boolean;
  /** Browser origins besides loopback ones and PUBLIC_URL's that may use /mcp (MCP_ALLOWED_ORIGINS, comma-separated). Default none. */
  readonly mcpAllowedOrigins: readonly string[];
  /** URL prefixes of routers' subscription callback endpoints this gateway may POST to (SUBSCRIPTION_CALLBACK_URLS, comma-separated). Default none. */
  readonly subscriptionCallbackUrls: readonly string[];
  /** Refuse any operation that is not one of PERSISTED_DOCUMENTS (PERSISTED_DOCUMENTS_ONLY). Default false. */
  readonly persistedDocumentsOnly: boolean;
  /** Fields whose resolvers get a span each, as `Type.field` coordinates, or `*` for every field with a resolver of its own (TRACE_RESOLVERS). Default none. */
  readonly traceResolvers: readonly string[];
  /** OpenTelemetry trace export, from the standard OTEL_* variables; null (the default) when no OTLP endpoint is set. */
  readonly tracing: TracingConfig | null;
}

/** Where and how traces are exported (OTLP over HTTP), read from the standard OTEL_* variables. */
export interface TracingConfig {
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT plus `/v1/traces`. */
  readonly url: URL;
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: `http/protobuf` (the default) or `http/json`. */
  readonly protocol: 'http/protobuf' | 'http/json';
  /** OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, e.g. an API key of the collector: sent to the collector only, never logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT, in ms. Default 10,000. */
  readonly timeoutMs: number;
  /** OTEL_SERVICE_NAME. Default duograph. */
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** OTEL_TRACES_SAMPLER: whether a caller's sampling decision is followed (`parentbased_*`, the default), and the root decision. */
  readonly sampler: { readonly parentBased: boolean; readonly root: 'always_on' | 'always_off' | 'traceidratio' };
  /** OTEL_TRACES_SAMPLER_ARG for `traceidratio`, 0 to 1. Default 1. */
  readonly samplerRatio: number;
  /**
   * OTEL_BSP_SCHEDULE_DELAY: how long spans wait to be sent in a batch, in ms. Default 1,000, not the
   * specification's 5,000: at a sampling ratio of 0.1 a batch then fills for about 3 s, and spans held
   * that long cost 2.5% more of the gateway's CPU in bench:tracing (1.066x of off against 1.041x).
   */
  readonly scheduleDelayMs: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** One option: its env variable, its CLI flag, and how to read it. */
interface Option<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  help: string;
  parse: (raw: string, name: string) => Config[K];
}

function integer(min: number, max: number) {
  return (raw: string, name: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
    return value;
  };
}

/** A share (a number, not a whole one) from `min` to `max`. */
function share(min: number, max: number) {
  return (raw: string, name: string): number => {
    const value = Number(raw.trim());
    if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max)
      throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
    return value;
  };
}

function optionalInteger(min: number, max: number) {
  const parse = integer(min, max);
  return (raw: string, name: string): number | null => (raw.trim() === '' ? null : parse(raw, name));
}

function flag(raw: string, name: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function coordinates(raw: string, name: string): readonly string[] {
  const list = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const item of list) {
    if (item !== '*' && !/^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/.test(item)) {
      throw new ConfigError(`${name} must list Type.field coordinates or *, got "${item}"`);
    }
  }
  return list;
}

function secret(raw: string, name: string): string | null {
  if (raw === '') return null;
  // GitLab strips line breaks from the token before sending it; a secret with them could never match.
  if (raw.length < 16 || raw.length > 512 || /[\u0000-\u001f\u007f]/.test(raw)) {
    throw new ConfigError(`${name} must be 16 to 512 printable characters`);
  }
  return raw;
}

function redisUrl(raw: string, name: string): string | null {
  if (raw.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(`${name} must be a redis:// or rediss:// URL`);
  return raw.trim();
}

/** The API paths under each upstream's base URL. */
export const GITLAB_API_PATH = 'api/v4';
export const HUBZILLA_API_PATH = 'api/z/1.0';

/** The API base under an upstream's base URL, which may carry a path prefix (a GitLab under a relative URL root). */
export function apiBase(base: URL, apiPath: string): URL {
  return new URL(apiPath, base.href.endsWith('/') ? base : `${base.href}/`);
}

/**
 * A base URL given with its API path (`…/api/v4`, the form the `sandbox`
 * command used to print) loses that suffix, keeping any prefix before it (a
 * GitLab under a relative URL root): the gateway adds the API path itself,
 * and a doubled one answers 404 to every call.
 */
function baseUrlWithout(suffix: RegExp): (raw: string, name: string) => URL | null {
  return (raw, name) => {
    const url = httpUrl(raw, name);
    if (url) url.pathname = url.pathname.replace(suffix, '') || '/';
    return url;
  };
}

function httpUrl(raw: string, name: string): URL | null {
  if (raw.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL: "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http or https URL, got "${raw}"`);
  }
  if (url.username || url.password) throw new ConfigError(`${name} must not hold credentials; send them per request`);
  if (url.search || url.hash) throw new ConfigError(`${name} must not have a query or fragment`);
  return url;
}

export const SANDBOX_HUBZILLA_VERSIONS = ['8.8', '10'] as const;
export type SandboxHubzillaVersion = (typeof SANDBOX_HUBZILLA_VERSIONS)[number];

function sandboxHubzillaVersion(raw: string, name: string): SandboxHubzillaVersion {
  const value = raw.trim();
  if (value === '') return '8.8';
  if (!(SANDBOX_HUBZILLA_VERSIONS as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${SANDBOX_HUBZILLA_VERSIONS.join(', ')}, got "${raw.slice(0, 40)}"`);
  }
  return value as SandboxHubzillaVersion;
}

function origins(raw: string, name: string): readonly string[] {
  const list = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const origin of list) {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      // Refused below.
    }
    if (!url || url.origin !== origin) throw new ConfigError(`${name} takes origins like https://app.example.com (no path), got "${origin.slice(0, 80)}"`);
  }
  return list;
}

/** Absolute http(s) URLs a callback URL must lie under: no credentials, query or fragment; each as its normal href. */
function urlPrefixes(raw: string, name: string): readonly string[] {
  return raw
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '')
    .map((u) => (httpUrl(u, name) as URL).href);
}

function logLevel(raw: string, name: string): LogLevel {
  const value = raw.trim().toLowerCase();
  if (value === '') return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(value)) throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return value as LogLevel;
}

function filePath(raw: string): string | null {
  return raw.trim() === '' ? null : raw;
}

const OPTIONS = [
  { key: 'port', env: 'PORT', flag: '--port', help: 'port of the gateway (default 4000)', parse: integer(0, 65535) },
  { key: 'host', env: 'HOST', flag: '--host', help: 'interface to listen on (default 0.0.0.0)', parse: (raw: string) => raw },
  {
    key: 'gitlabUrl',
    env: 'GITLAB_URL',
    flag: '--gitlab-url',
    help: 'GitLab base URL, e.g. https://gitlab.example.com; a trailing /api/v4 is dropped (default: built-in sandbox)',
    parse: baseUrlWithout(/\/api\/v4\/?$/),
  },
  {
    key: 'upstreamTimeoutMs',
    env: 'UPSTREAM_TIMEOUT_MS',
    flag: '--upstream-timeout-ms',
    help: 'upstream headers and body timeout in ms (default 10000)',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamConnectTimeoutMs',
    env: 'UPSTREAM_CONNECT_TIMEOUT_MS',
    flag: '--upstream-connect-timeout-ms',
    help: 'upstream connect timeout in ms (default 5000)',
    parse: integer(1, 600_000),
  },
  {
    key: 'upstreamHeadersTimeoutMs',
    env: 'UPSTREAM_HEADERS_TIMEOUT_MS',
    flag: '--upstream-headers-timeout-ms',
    help: 'upstream response headers timeout in ms (default: UPSTREAM_TIMEOUT_MS)',
    parse: optionalInteger(1, 600_000),
  },
  {
    key: 'upstreamBodyTimeoutMs',
    env: 'UPSTREAM_BODY_TIMEOUT_MS',
    flag: '--upstream-body-timeout-ms',
    help: 'longest pause between upstream body chunks in ms (default: UPSTREAM_TIMEOUT_MS)',
    parse: optionalInteger(1, 600_000),
  },
  {
    key: 'upstreamRetries',
    env: 'UPSTREAM_RETRIES',
    flag: '--upstream-retries',
    help: 'extra attempts of a GET on connection errors, 429, 502/503/504 (default 2)',
    parse: integer(0, 10),
  },
  {
    key: 'upstreamRetryBaseMs',
    env: 'UPSTREAM_RETRY_BASE_MS',
    flag: '--upstream-retry-base-ms',
    help: 'first retry back-off step in ms, jittered (default 100)',
    parse: integer(1, 60_000),
  },
  {
    key: 'upstreamRetryMaxDelayMs',
    env: 'UPSTREAM_RETRY_MAX_DELAY_MS',
    flag: '--upstream-retry-max-delay-ms',
    help: 'longest wait before a retry, Retry-After included, in ms (default 2000)',
    parse: integer(1, 600_000),
  },
  {
    key: 'breakerThreshold',
    env: 'BREAKER_THRESHOLD',
    flag: '--breaker-threshold',
    help: 'consecutive failures that open an upstream breaker, 0 = off (default 5)',
    parse: integer(0, 10_000),
  },
  {
    key: 'breakerResetMs',
    env: 'BREAKER_RESET_MS',
    flag: '--breaker-reset-ms',
    help: 'how long an open breaker fails fast before a probe, in ms (default 10000)',
    parse: integer(1, 3_600_000),
  },
  {
    key: 'upstreamMaxConcurrency',
    env: 'UPSTREAM_MAX_CONCURRENCY',
    flag: '--upstream-max-concurrency',
    help: 'calls in flight at once per upstream (default 128)',
    parse: integer(1, 10_000),
  },
  {
    key: 'workers',
    env: 'WORKERS',
    flag: '--workers',
    help: 'gateway processes on one port: a number, or auto for the available cores (default 1)',
    parse: (raw: string, name: string) => (raw.trim() === 'auto' ? availableParallelism() : integer(1, 256)(raw, name)),
  },
  { key: 'maxDepth', env: 'MAX_DEPTH', flag: '--max-depth', help: 'deepest selection of an operation (default 15)', parse: integer(1, 1000) },
  { key: 'maxAliases', env: 'MAX_ALIASES', flag: '--max-aliases', help: 'most aliases in an operation (default 30)', parse: integer(0, 100_000) },
  { key: 'maxTokens', env: 'MAX_TOKENS', flag: '--max-tokens', help: 'most tokens in a GraphQL document (default 2000)', parse: integer(10, 1_000_000) },
  { key: 'maxDirectives', env: 'MAX_DIRECTIVES', flag: '--max-directives', help: 'most directives in an operation (default 20)', parse: integer(0, 100_000) },
  {
    key: 'maxBodyBytes',
    env: 'MAX_BODY_BYTES',
    flag: '--max-body-bytes',
    help: 'largest non-multipart GraphQL request body in bytes (default 1048576)',
    parse: integer(1024, 2 ** 30),
  },
  {
    key: 'maxCost',
    env: 'MAX_COST',
    flag: '--max-cost',
    help: 'most upstream calls an operation may be estimated to cause (default 2000)',
    parse: integer(1, 10_000_000),
  },
  {
    key: 'maxCostInFlight',
    env: 'MAX_COST_IN_FLIGHT',
    flag: '--max-cost-in-flight',
    help: 'estimated upstream calls of the operations running at once; more wait, 0 = no limit (default 4096)',
    parse: integer(0, 100_000_000),
  },
  {
    key: 'fieldSuggestions',
    env: 'FIELD_SUGGESTIONS',
    flag: '--field-suggestions',
    help: 'name schema fields in "Did you mean" errors (default false)',
    parse: flag,
  },
  {
    key: 'upstreamConnections',
    env: 'UPSTREAM_CONNECTIONS',
    flag: '--upstream-connections',
    help: 'keep-alive connections per upstream (default 128)',
    parse: integer(1, 4096),
  },
  {
    key: 'upstreamMaxResponseBytes',
    env: 'UPSTREAM_MAX_RESPONSE_BYTES',
    flag: '--upstream-max-response-bytes',
    help: 'largest upstream JSON response in bytes (default 33554432)',
    parse: integer(1024, 2 ** 31),
  },
  {
    key: 'maxUploadBytes',
    env: 'MAX_UPLOAD_BYTES',
    flag: '--max-upload-bytes',
    help: 'largest uploaded file in bytes (default 104857600)',
    parse: integer(1, 2 ** 40),
  },
  {
    key: 'defaultPageSize',
    env: 'DEFAULT_PAGE_SIZE',
    flag: '--default-page-size',
    help: 'page size when neither first nor last is given (default 20)',
    parse: integer(1, 100),
  },
  {
    key: 'sandboxLatencyMs',
    env: 'SANDBOX_LATENCY_MS',
    flag: '--sandbox-latency-ms',
    help: 'latency the sandbox adds per call, in ms (default 0)',
    parse: integer(0, 60_000),
  },
  {
    key: 'sandboxGitlabPort',
    env: 'SANDBOX_GITLAB_PORT',
    flag: '--sandbox-gitlab-port',
    help: 'port of the sandbox GitLab (default: a free port)',
    parse: integer(0, 65535),
  },
  {
    key: 'hubzillaUrl',
    env: 'HUBZILLA_URL',
    flag: '--hubzilla-url',
    help: 'Hubzilla base URL, e.g. https://hub.example.com; a trailing /api/z/1.0 is dropped (default: built-in sandbox)',
    parse: baseUrlWithout(/\/api\/z\/1\.0\/?$/),
  },
  {
    key: 'sandboxHubzillaPort',
    env: 'SANDBOX_HUBZILLA_PORT',
    flag: '--sandbox-hubzilla-port',
    help: 'port of the sandbox Hubzilla (default: a free port)',
    parse: integer(0, 65535),
  },
  {
    key: 'sandboxHubzillaVersion',
    env: 'SANDBOX_HUBZILLA_VERSION',
    flag: '--sandbox-hubzilla-version',
    help: `the Hubzilla release the sandbox plays: ${SANDBOX_HUBZILLA_VERSIONS.join(' or ')} (default 8.8)`,
    parse: sandboxHubzillaVersion,
  },
  {
    key: 'sandboxCredentials',
    env: 'SANDBOX_CREDENTIALS',
    flag: '--sandbox-credentials',
    help: "open GraphiQL with the sandbox's demo credentials (a primary sets it for its workers; default false)",
    parse: flag,
  },
  {
    key: 'persistedDocuments',
    env: 'PERSISTED_DOCUMENTS',
    flag: '--persisted-documents',
    help: 'trusted documents: a JSON file or folder of id -> operation (Relay, GraphQL Codegen; default none)',
    parse: filePath,
  },
  {
    key: 'mcpTools',
    env: 'MCP_TOOLS',
    flag: '--mcp-tools',
    help: 'the MCP tools: a JSON manifest of operations with descriptions (default: the tools that ship)',
    parse: filePath,
  },
  {
    key: 'mcpMutations',
    env: 'MCP_MUTATIONS',
    flag: '--mcp-mutations',
    help: "offer the manifest's mutations (e.g. post_to_channel) as MCP tools (default false)",
    parse: flag,
  },
  {
    key: 'mcpExplore',
    env: 'MCP_EXPLORE',
    flag: '--mcp-explore',
    help: 'offer the MCP exploration tools: the schema by type, validate an operation, run one within the cost limit (default false)',
    parse: flag,
  },
  {
    key: 'mcpAllowedOrigins',
    env: 'MCP_ALLOWED_ORIGINS',
    flag: '--mcp-allowed-origins',
    help: "browser origins besides loopback ones and PUBLIC_URL's that may use /mcp, comma-separated (default none)",
    parse: origins,
  },
  {
    key: 'subscriptionCallbackUrls',
    env: 'SUBSCRIPTION_CALLBACK_URLS',
    flag: '--subscription-callback-urls',
    help: "URL prefixes of routers' subscription callback endpoints this gateway may POST to (callback/1.0), comma-separated (default none)",
    parse: urlPrefixes,
  },
  {
    key: 'persistedDocumentsOnly',
    env: 'PERSISTED_DOCUMENTS_ONLY',
    flag: '--persisted-documents-only',
    help: 'refuse operations that are not trusted documents (default false)',
    parse: flag,
  },
  {
    key: 'traceResolvers',
    env: 'TRACE_RESOLVERS',
    flag: '--trace-resolvers',
    help: 'with tracing on, a span per resolver of these Type.field coordinates, or * (default none)',
    parse: coordinates,
  },
  {
    key: 'requireCredentials',
    env: 'REQUIRE_CREDENTIALS',
    flag: '--require-credentials',
    help: 'refuse subscriptions without a valid GitLab credential (default false)',
    parse: flag,
  },
  {
    key: 'gitlabWebhookSecret',
    env: 'GITLAB_WEBHOOK_SECRET',
    flag: '--gitlab-webhook-secret',
    help: 'X-Gitlab-Token expected at /webhooks/gitlab (default: random per process)',
    parse: secret,
  },
  {
    key: 'gitlabWebhookSigningToken',
    env: 'GITLAB_WEBHOOK_SIGNING_TOKEN',
    flag: '--gitlab-webhook-signing-token',
    help: 'whsec_<base64> token GitLab (19.0+) signs webhook deliveries with; registered hooks get it (default: none)',
    parse: (raw: string, name: string): string => {
      const value = raw.trim();
      const key = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value)?.[1];
      if (!key || Buffer.from(key, 'base64').length < 24) throw new ConfigError(`${name} must be "whsec_" and at least 24 bytes in base64`);
      return value;
    },
  },
  {
    key: 'webhookMaxBytes',
    env: 'WEBHOOK_MAX_BYTES',
    flag: '--webhook-max-bytes',
    help: 'largest webhook body in bytes (default 5242880)',
    parse: integer(1024, 25 * 1024 * 1024),
  },
  {
    key: 'pollIntervalMs',
    env: 'POLL_INTERVAL_MS',
    flag: '--poll-interval-ms',
    help: 'first interval of a shared job poller in ms (default 5000)',
    parse: integer(10, 3_600_000),
  },
  {
    key: 'pollMaxIntervalMs',
    env: 'POLL_MAX_INTERVAL_MS',
    flag: '--poll-max-interval-ms',
    help: 'longest poller back-off interval in ms (default 60000)',
    parse: integer(10, 3_600_000),
  },
  {
    key: 'logReadBytesPerSecond',
    env: 'LOG_READ_BYTES_PER_SECOND',
    flag: '--log-read-bytes-per-second',
    help: 'bytes a live job log may read per second when GitLab sends the whole log, 0 = no bound (default 1048576)',
    parse: integer(0, 1024 * 1024 * 1024),
  },
  { key: 'redisUrl', env: 'REDIS_URL', flag: '--redis-url', help: 'Redis for pub/sub across instances (default: in memory)', parse: redisUrl },
  {
    key: 'cacheMaxAgeMs',
    env: 'CACHE_MAX_AGE_MS',
    flag: '--cache-max-age-ms',
    help: 'plain maximum age of a cached upstream answer in ms, 0 = no cache (default 5000)',
    parse: integer(0, 3_600_000),
  },
  {
    key: 'cacheWebhookMaxAgeMs',
    env: 'CACHE_WEBHOOK_MAX_AGE_MS',
    flag: '--cache-webhook-max-age-ms',
    help: 'maximum age of job and pipeline answers of a webhook-fed project in ms (default 60000)',
    parse: integer(0, 3_600_000),
  },
  {
    key: 'cacheMaxBytes',
    env: 'CACHE_MAX_BYTES',
    flag: '--cache-max-bytes',
    help: 'bytes the in-memory answer cache may hold (default 67108864)',
    parse: integer(1024, 2 ** 40),
  },
  {
    key: 'cacheStore',
    env: 'CACHE_STORE',
    flag: '--cache-store',
    help: 'where cached answers live: memory or redis (default: redis with REDIS_URL, else memory)',
    parse: (raw: string, name: string): 'memory' | 'redis' => {
      const value = raw.trim().toLowerCase();
      if (value !== 'memory' && value !== 'redis') throw new ConfigError(`${name} must be memory or redis, got "${raw}"`);
      return value;
    },
  },
  {
    key: 'gitlabRateLimitPerMinute',
    env: 'GITLAB_RATE_LIMIT_PER_MINUTE',
    flag: '--gitlab-rate-limit-per-minute',
    help: "GitLab calls per minute per GitLab user (and for anonymous callers), as GitLab's limit (default: learned from RateLimit-Limit)",
    parse: optionalInteger(1, 10_000_000),
  },
  {
    key: 'rateLimitReserve',
    env: 'RATE_LIMIT_RESERVE',
    flag: '--rate-limit-reserve',
    help: "share of a minute's budget background work leaves to callers, 0 to 0.9 (default 0.2)",
    parse: share(0, 0.9),
  },
  {
    key: 'inboundCallsPerMinute',
    env: 'INBOUND_CALLS_PER_MINUTE',
    flag: '--inbound-calls-per-minute',
    help: 'upstream calls each caller (GitLab user, verified Hubzilla channel, else client address) may cause per minute; more is refused with 429 (default: no limit)',
    parse: optionalInteger(1, 10_000_000),
  },
  {
    key: 'anonymousSharePerAddress',
    env: 'ANONYMOUS_SHARE_PER_ADDRESS',
    flag: '--anonymous-share-per-address',
    help: "share of GitLab's anonymous budget one client address may spend a minute, 0.01 to 1 (default 0.25)",
    parse: share(0.01, 1),
  },
  {
    key: 'trustedProxies',
    env: 'TRUSTED_PROXIES',
    flag: '--trusted-proxies',
    help: 'comma-separated addresses or CIDR ranges of proxies whose X-Forwarded-For names the client (default: none)',
    parse: (raw: string, name: string): string[] => {
      const entries = raw
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean);
      for (const entry of entries) if (!proxyRange(entry)) throw new ConfigError(`${name} takes IP addresses and CIDR ranges, got "${entry}"`);
      return entries;
    },
  },
  {
    key: 'sandboxRateLimitPerMinute',
    env: 'SANDBOX_RATE_LIMIT_PER_MINUTE',
    flag: '--sandbox-rate-limit-per-minute',
    help: 'API requests per minute the sandbox GitLab allows each user, 0 = never throttled (default 0)',
    parse: integer(0, 10_000_000),
  },
  {
    key: 'cacheKeySecret',
    env: 'CACHE_KEY_SECRET',
    flag: '--cache-key-secret',
    help: 'keys the digest of cache keys; the same on every instance (default: from GITLAB_WEBHOOK_SECRET, else random)',
    parse: secret,
  },
  {
    key: 'publicUrl',
    env: 'PUBLIC_URL',
    flag: '--public-url',
    help: 'public base URL of the gateway, for webhook registration (default: listen address)',
    parse: httpUrl,
  },
  { key: 'logLevel', env: 'LOG_LEVEL', flag: '--log-level', help: `least severe JSON log level: ${LOG_LEVELS.join(', ')} (default info)`, parse: logLevel },
  { key: 'logFile', env: 'LOG_FILE', flag: '--log-file', help: 'append the JSON logs to this file (default: stdout)', parse: filePath },
  {
    key: 'shutdownTimeoutMs',
    env: 'SHUTDOWN_TIMEOUT_MS',
    flag: '--shutdown-timeout-ms',
    help: 'on SIGTERM, longest wait for in-flight requests in ms (default 10000)',
    parse: integer(0, 600_000),
  },
  {
    key: 'heapGrowingPercent',
    env: 'HEAP_GROWING_PERCENT',
    flag: '--heap-growing-percent',
    help: 'old-generation growth past live heap, in percent; 0 = V8 default (default 100)',
    parse: integer(0, 1000),
  },
] satisfies Option<keyof Config>[];

const DEFAULTS: Config = {
  port: 4000,
  host: '0.0.0.0',
  gitlabUrl: null,
  upstreamTimeoutMs: 10_000,
  upstreamConnectTimeoutMs: 5_000,
  upstreamHeadersTimeoutMs: null,
  upstreamBodyTimeoutMs: null,
  upstreamRetries: 2,
  upstreamRetryBaseMs: 100,
  upstreamRetryMaxDelayMs: 2_000,
  breakerThreshold: 5,
  breakerResetMs: 10_000,
  upstreamMaxConcurrency: 128,
  maxDepth: 15,
  maxAliases: 30,
  maxTokens: 2_000,
  maxDirectives: 20,
  maxBodyBytes: 1024 * 1024,
  maxCost: 2_000,
  maxCostInFlight: 4_096,
  fieldSuggestions: false,
  upstreamConnections: 128,
  upstreamMaxResponseBytes: 32 * 1024 * 1024,
  maxUploadBytes: 100 * 1024 * 1024,
  defaultPageSize: 20,
  sandboxLatencyMs: 0,
  sandboxGitlabPort: 0,
  hubzillaUrl: null,
  sandboxHubzillaPort: 0,
  sandboxHubzillaVersion: '8.8',
  requireCredentials: false,
  gitlabWebhookSecret: null,
  gitlabWebhookSigningToken: null,
  webhookMaxBytes: 5 * 1024 * 1024,
  pollIntervalMs: 5_000,
  pollMaxIntervalMs: 60_000,
  logReadBytesPerSecond: 1024 * 1024,
  redisUrl: null,
  cacheMaxAgeMs: 5_000,
  cacheWebhookMaxAgeMs: 60_000,
  cacheMaxBytes: 64 * 1024 * 1024,
  cacheStore: 'memory',
  cacheKeySecret: null,
  gitlabRateLimitPerMinute: null,
  rateLimitReserve: 0.2,
  inboundCallsPerMinute: null,
  anonymousSharePerAddress: 0.25,
  trustedProxies: [],
  sandboxRateLimitPerMinute: 0,
  publicUrl: null,
  logLevel: 'info',
  logFile: null,
  shutdownTimeoutMs: 10_000,
  heapGrowingPercent: 100,
  workers: 1,
  sandboxCredentials: false,
  persistedDocuments: null,
  persistedDocumentsOnly: false,
  mcpTools: null,
  mcpMutations: false,
  mcpExplore: false,
  mcpAllowedOrigins: [],
  subscriptionCallbackUrls: [],
  traceResolvers: [],
  tracing: null,
};

/** Lines for `--help`: every option with its flag and env variable. */
export function configHelp(): string {
  return OPTIONS.map((o) => `  ${`${o.flag} <value>`.padEnd(36)} ${o.env.padEnd(28)} ${o.help}`).join('\n');
}

/**
 * Reads the config from the environment and `--flag value` / `--flag=value`
 * arguments (flags win). Throws ConfigError on an unknown flag or a bad value.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env, args: readonly string[] = []): Config {
  const raw = new Map<string, { value: string; name: string }>();
  for (const option of OPTIONS) {
    const value = env[option.env];
    if (value !== undefined) raw.set(option.key, { value, name: option.env });
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const option = OPTIONS.find((o) => o.flag === flag);
    if (!option) throw new ConfigError(`unknown option "${arg}" (see --help)`);
    const value = inline ?? args[++i];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    raw.set(option.key, { value, name: flag });
  }
  const config: Record<string, unknown> = { ...DEFAULTS };
  for (const option of OPTIONS) {
    const given = raw.get(option.key);
    if (given) config[option.key] = option.parse(given.value, given.name);
  }
  if ((config.pollMaxIntervalMs as number) < (config.pollIntervalMs as number)) {
    throw new ConfigError('POLL_MAX_INTERVAL_MS must not be below POLL_INTERVAL_MS');
  }
  if (config.mcpExplore && config.persistedDocumentsOnly) {
    throw new ConfigError('MCP_EXPLORE runs operations sent as text, which PERSISTED_DOCUMENTS_ONLY refuses: use one or the other');
  }
  if (config.persistedDocumentsOnly && !config.persistedDocuments) {
    throw new ConfigError('PERSISTED_DOCUMENTS_ONLY needs PERSISTED_DOCUMENTS (the documents to accept)');
  }
  if (!raw.has('cacheStore') && config.redisUrl) config.cacheStore = 'redis';
  if (config.cacheStore === 'redis' && !config.redisUrl) throw new ConfigError('CACHE_STORE=redis needs REDIS_URL');
  config.tracing = tracingConfig(env);
  return Object.freeze(config as unknown as Config);
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/**
 * Trace export from the standard OTEL_* variables (the OpenTelemetry SDK
 * configuration spec): on when an OTLP endpoint is set, unless
 * OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is `none`. Only OTLP over
 * HTTP is built in; a `grpc` protocol is refused rather than ignored.
 */
export function tracingConfig(env: Readonly<Record<string, string | undefined>>): TracingConfig | null {
  const get = (name: string) => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const traces = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = get('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!traces && !base) return null;
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporter = get('OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return null;
  if (exporter && exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none, got "${exporter}"`);
  const name = traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let url: URL;
  try {
    url = traces ? new URL(traces) : new URL(`${(base as string).replace(/\/+$/, '')}/v1/traces`);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL`);
  const protocol = get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? get('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not built in), got "${protocol}"`);
  }
  const sampler = (get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!SAMPLERS.includes(sampler)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${sampler}"`);
  const ratioRaw = get('OTEL_TRACES_SAMPLER_ARG');
  const samplerRatio = ratioRaw === undefined ? 1 : Number(ratioRaw);
  if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${ratioRaw}"`);
  }
  const headersRaw = get('OTEL_EXPORTER_OTLP_TRACES_HEADERS') ?? get('OTEL_EXPORTER_OTLP_HEADERS');
  const timeoutRaw = get('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? get('OTEL_EXPORTER_OTLP_TIMEOUT');
  const delayRaw = get('OTEL_BSP_SCHEDULE_DELAY');
  return {
    url,
    protocol,
    headers: keyValues(headersRaw, 'OTEL_EXPORTER_OTLP_HEADERS'),
    timeoutMs: timeoutRaw === undefined ? 10_000 : integer(1, 600_000)(timeoutRaw, 'OTEL_EXPORTER_OTLP_TIMEOUT'),
    serviceName: get('OTEL_SERVICE_NAME') ?? 'duograph',
    resourceAttributes: keyValues(get('OTEL_RESOURCE_ATTRIBUTES'), 'OTEL_RESOURCE_ATTRIBUTES'),
    sampler: {
      parentBased: sampler.startsWith('parentbased_'),
      root: sampler.replace(/^parentbased_/, '') as TracingConfig['sampler']['root'],
    },
    samplerRatio,
    scheduleDelayMs: delayRaw === undefined ? 1_000 : integer(0, 600_000)(delayRaw, 'OTEL_BSP_SCHEDULE_DELAY'),
  };
}

/** `key1=value1,key2=value2`, values percent-decoded (the W3C baggage format OTEL_* lists use). The message never quotes a value: it may be an API key. */
function keyValues(raw: string | undefined, name: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  if (!raw) return pairs;
  for (const item of raw.split(',')) {
    if (!item.trim()) continue;
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (!key) throw new ConfigError(`${name} must be a list of key=value pairs`);
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name} has a value that is not percent-encoded correctly (key "${key}")`);
    }
  }
  return pairs;
}

/** An address or CIDR range of TRUSTED_PROXIES as net.BlockList takes it, or null when it is neither. */
export function proxyRange(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', bits] = entry.split('/', 2);
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : null;
  if (family === null) return null;
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return prefix >= 0 && prefix <= max ? { address, prefix, family } : null;
}
