/**
 * The one HTTP client every upstream goes through, and the only importer of
 * undici: a keep-alive Pool per upstream, timeouts and a response size cap,
 * path segments always encoded, the caller's credentials forwarded as headers,
 * upstream failures mapped to the closed error code set, and a call counter.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { Agent, Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import { UpstreamError, type ErrorCode, type UpstreamInfo } from '../errors.js';
import { type AnswerSource, type Claim, newCacheUsage, type RequestScope, type SourceCall, upstreamRequestId } from '../request-scope.js';
import type { AnswerCache, CacheCall, RawAnswer } from './answer-cache.js';
import { invalidationTags } from './cache-policy.js';
import type { ParsedBody } from './cache-store.js';
import { ANONYMOUS, type GitlabIdentities, type LookupResult, lookupPath, lookupUserId } from './identities.js';
import type { RateBudget } from './rate-budget.js';
import type { RateGate } from './rate-gate.js';
import { scrubText } from '../scrub.js';
import { relay, RelayError, RelayPool, type RelayHead, type RelaySink } from './relay.js';
import {
  backoffDelay,
  type BreakerState,
  CircuitBreaker,
  ConcurrencyLimiter,
  deadline,
  parseRetryAfter,
  sleep,
  type CallSignal,
  type ResiliencePolicy,
} from './resilience.js';

export interface HttpClientOptions {
  /** Upstream name shown in errors and metrics, e.g. "gitlab". */
  name: string;
  /** Origin plus base path, e.g. https://gitlab.example.com/api/v4. */
  baseUrl: URL;
  /** Headers and body timeout of one call, in ms. */
  timeoutMs: number;
  /** Keep-alive connections in the pool. */
  connections: number;
  /** Bodies larger than this fail with UPSTREAM_ERROR. */
  maxResponseBytes: number;
  /** Timeouts, retries, breaker and concurrency (resilience.ts); unset parts take DEFAULT_POLICY's, with `timeoutMs` as deadline and headers/body timeouts. */
  policy?: Partial<ResiliencePolicy>;
  /** Told of every call sent (each retry too), e.g. for metrics; must not throw. */
  onCall?: (call: UpstreamCall) => void;
  /** Path segments kept literally in `UpstreamCall.route`; any other segment (ids, paths, names) becomes `:param`. */
  routeWords?: readonly string[];
  /** Traces each call (server/tracing.ts); without one, calls carry the caller's trace context on unchanged. */
  tracer?: UpstreamTracer | null;
  /** Shares GETs in flight and keeps their answers (answer-cache.ts); writes drop what they change. None: every call goes out. */
  cache?: AnswerCache | null;
  /** Holds back the calls of a scope GitLab rate-limited until it lets them come again (rate-gate.ts). */
  gate?: RateGate | null;
  /** The clock of what is remembered about this upstream's logins (hubzilla/identities.ts); tests move it. Default Date.now. */
  now?: () => number;
  /** Counts the calls of each scope against GitLab's limit, background work yielding first (rate-budget.ts). */
  budget?: RateBudget | null;
  /** Whom GitLab counts each call against, and which credentials it refused (identities.ts): budgets follow it. */
  identities?: GitlabIdentities | null;
  /** The caller a call made for no request (a poll) is charged to, by the credentials object it carries; told in `UpstreamCall.chargeTo`. */
  chargeOf?: (credentials: object | undefined) => string | undefined;
}

/**
 * Starts the trace span of one upstream call and writes its trace context
 * into `headers`. One span covers a call's retries. Sees what `UpstreamCall`
 * sees and nothing more: never a raw path, a query or a header value. The
 * call is described on demand: a call of a request not sampled has no span.
 */
export interface UpstreamTracer {
  start(describe: () => UpstreamSpanCall, headers: Record<string, string>, scope: RequestScope | undefined): UpstreamSpan;
}

/** What the span of an upstream call is named and labelled by. */
export interface UpstreamSpanCall {
  upstream: string;
  method: string;
  /** The route template, as in `UpstreamCall.route`. */
  route: string;
  breaker: BreakerState;
}

/** The span of one upstream call, ended once with its outcome. */
export interface UpstreamSpan {
  end(outcome: UpstreamOutcome): void;
  /** Links the span of another request this call also served (a read in flight it joined). */
  link?(scope: RequestScope): void;
}

export interface UpstreamOutcome {
  /** The last HTTP status, or the error code of a call that got none. */
  status: number | string;
  /** Attempts after the first. */
  retries: number;
  /** Response body bytes read, where the gateway read the body whole. */
  bytes?: number;
  /** The upstream's own id of the request (GitLab's correlation id), from its `X-Request-Id`. */
  upstreamRequestId?: string;
  /** How the answer cache served it: `hit` (no call went out), `revalidated` (a 304), `miss`. */
  cache?: 'hit' | 'revalidated' | 'miss';
}

/** One call as `onCall` sees it: never a raw path, a query or a header, so nothing in it identifies a caller or a resource. */
export interface UpstreamCall {
  upstream: string;
  method: string;
  /** The route template, e.g. `/projects/:param/jobs/:param`. */
  route: string;
  /** The HTTP status, or the error code of a call that got none (`UPSTREAM_TIMEOUT`, `UPSTREAM_UNAVAILABLE`, …), or `client_closed`. */
  status: number | string;
  /** Time to the response's headers, in ms. */
  durationMs: number;
  /** The upstream's own id of the request (GitLab's correlation id), from its `X-Request-Id` when it sent a well-formed one. */
  upstreamRequestId?: string;
  /** The request the call was made for (none for pollers, which serve everyone). */
  scope?: RequestScope;
  /** Why a call got no answer, in the system's words: `ECONNREFUSED`, `ENOTFOUND`, a TLS code, `UND_ERR_CONNECT_TIMEOUT`, … */
  cause?: string;
  /** For a call made for no request: the caller it is charged to (the inbound allowance's key), when one is known. */
  chargeTo?: string;
}

/**
 * The cause of a transport failure as an operator reads it: the error code
 * of undici or the system (DNS, refused, TLS, timeout), never its message,
 * which may carry a URL.
 */
export function transportCause(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at && depth < 4; at = (at as { cause?: unknown }).cause, depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,63}$/.test(code) && code !== 'UND_ERR') return code;
    if (at instanceof Error && at.name === 'TimeoutError') return 'TIMEOUT';
  }
  return undefined;
}

/** The route template of a path: known words kept, everything else `:param`; deeper than 8 segments collapse into `*`. */
export function routeTemplate(segments: PathSegments, words: ReadonlySet<string>): string {
  const parts = segments.slice(0, 8).map((s) => (typeof s === 'string' && words.has(s) ? s : ':param'));
  return `/${parts.join('/')}${segments.length > 8 ? '/*' : ''}`;
}

/** The policy parts an HttpClient falls back to; timeouts come from `timeoutMs`. */
export const DEFAULT_POLICY = {
  connectTimeoutMs: 5_000,
  retries: 2,
  retryBaseMs: 100,
  retryMaxDelayMs: 2_000,
  breakerThreshold: 5,
  breakerResetMs: 10_000,
  maxConcurrency: 128,
} as const;

/** Statuses worth another attempt of an idempotent call: the upstream or a proxy in front of it is briefly unable. */
const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
/** Statuses that count against the breaker (429 does not: a rate-limiting upstream is up). */
const BREAKER_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** A path given as segments; each one is encoded, so `a/b` becomes `a%2Fb`. */
export type PathSegments = readonly (string | number)[];

export type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;

/** A call as the client sends it: on its caller's signal, or on a shared read's own (shared-reads.ts). */
type CallRequest = Omit<UpstreamRequest, 'signal'> & { signal?: CallSignal };

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: PathSegments;
  query?: Readonly<Record<string, QueryValue>>;
  /** Credential headers to forward, already in their upstream form. */
  headers?: Readonly<Record<string, string>>;
  /** A JSON body; a FormData body, sent as multipart and streamed; or URLSearchParams, sent form-encoded. */
  body?: unknown;
  signal?: AbortSignal;
  /** The request this call serves: its id goes upstream as X-Request-Id, its trace context as traceparent. */
  scope?: RequestScope;
  /** The field of the request whose resolver sends this read (schema/claims.ts): the stored answer it reads is noted there too. */
  claim?: Claim;
  /** Work for no caller waiting on it (a poll, a log watch, a webhook's re-read): it yields to callers when the call budget runs low. */
  background?: boolean;
  /** Who the upstream verified these credentials as, when known: stored answers are kept for that identity, shared by its other logins, instead of for the credential headers. */
  cacheIdentity?: string;
  /** The budget the call is taken from, where the caller knows it better than the credentials say (a lookup of who they are: the anonymous one). */
  budgetKey?: string;
  /**
   * Keeps of a JSON body only what the caller reads, where the body is
   * parsed. A page handed up through a call's promises stays reachable from
   * them until the next full collection (they were made when the call
   * started and are old by the time it answers, under load), so whatever of
   * it they hold, every young collection copies. Sees every JSON body, error
   * bodies too: what it does not recognise it returns as it is.
   */
  select?: (body: unknown) => unknown;
}

/** What a multipart file part needs: web Blobs and the File objects Yoga's multipart parser makes both fit. */
export interface BlobLike {
  readonly type: string;
  stream(): AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
}

/** One part of a multipart body: a text field, or a file streamed from its Blob. */
export type FormPart = { name: string; value: string } | { name: string; file: BlobLike; filename: string };

/** A multipart/form-data body, written part by part as it is sent: files are streamed, never copied whole. */
export class MultipartBody {
  readonly boundary = `----duograph${randomBytes(12).toString('hex')}`;
  constructor(readonly parts: readonly FormPart[]) {}

  get contentType(): string {
    return `multipart/form-data; boundary=${this.boundary}`;
  }

  toStream(): Readable {
    const { boundary, parts } = this;
    // Quotes and line breaks in names are percent-encoded, as browsers do.
    const quote = (text: string) => text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
    async function* generate(): AsyncGenerator<Uint8Array> {
      for (const part of parts) {
        if ('file' in part) {
          const type = part.file.type || 'application/octet-stream';
          yield Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"; filename="${quote(part.filename)}"\r\nContent-Type: ${type.replace(/[\r\n]/g, '')}\r\n\r\n`,
          );
          yield* part.file.stream() as AsyncIterable<Uint8Array>;
          yield Buffer.from('\r\n');
        } else {
          yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"\r\n\r\n${part.value}\r\n`);
        }
      }
      yield Buffer.from(`--${boundary}--\r\n`);
    }
    return Readable.from(generate());
  }
}

/** A multipart body for UpstreamRequest.body. */
export function multipartBody(parts: readonly FormPart[]): MultipartBody {
  return new MultipartBody(parts);
}

export interface StreamResponse {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  /** The upstream body; the caller must consume or destroy it. */
  body: Dispatcher.ResponseData['body'];
}

/** A GET of a binary resource: what it accepts, the caller's Range if any, and the ETag of a copy the caller holds. */
export type BinaryRequest = UpstreamRequest & { accept?: string; range?: string; ifNoneMatch?: string };

/** A whole response body read as text, whatever the status (see HttpClient.text). */
export interface TextResponse {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  text: string;
  /** Where the call went, with its status: for errors the caller builds from the body. */
  info: UpstreamInfo;
}

export interface UpstreamResponse<T> {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  body: T;
}

/** Encodes each segment, so ids that are paths (`group/project`) and `../` stay inside the API path. */
export function encodePath(segments: PathSegments): string {
  return segments.map((s) => encodeURIComponent(String(s))).join('/');
}

/** Serialises query parameters the way GitLab reads them: arrays as repeated `name[]=`. */
export function encodeQuery(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(`${key}[]`, String(v));
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

const STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  429: 'UPSTREAM_RATE_LIMITED',
};

/** The error code for an upstream HTTP status that is not a success. */
export function codeForStatus(status: number): ErrorCode {
  const code = STATUS_CODES[status];
  if (code) return code;
  if (status >= 500) return 'UPSTREAM_ERROR';
  if (status >= 400) return 'BAD_USER_INPUT';
  return 'UPSTREAM_ERROR';
}

/** A short human text from an upstream error body (`message` or `error`), never longer than 300 chars. */
export function upstreamMessage(body: unknown): string | null {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const text = record.message ?? record.error_description ?? record.error;
    // GitLab's OAuth refusal names the scope the token lacks: keep it, it is what the caller must fix.
    if (record.error === 'insufficient_scope' && typeof text === 'string' && typeof record.scope === 'string') {
      return `${text.slice(0, 240)} The token needs the ${record.scope.slice(0, 40)} scope.`;
    }
    if (typeof text === 'string') return text.slice(0, 300);
    if (text && typeof text === 'object') return shortJson(text, 300);
  }
  return null;
}

/**
 * JSON of `value` cut at `max` characters, read no deeper than it needs: a
 * body nesting 50,000 levels is as short to print as any other (JSON.stringify
 * would recurse through all of it and throw RangeError).
 */
export function shortJson(value: unknown, max: number): string {
  let out = '';
  const write = (item: unknown, depth: number): void => {
    if (out.length >= max) return;
    if (depth > 8) {
      out += '…';
      return;
    }
    if (Array.isArray(item)) {
      out += '[';
      item.some((element, i) => {
        if (i > 0) out += ',';
        write(element, depth + 1);
        return out.length >= max;
      });
      out += ']';
    } else if (item && typeof item === 'object') {
      out += '{';
      Object.entries(item).some(([key, element], i) => {
        out += `${i > 0 ? ',' : ''}${JSON.stringify(key)}:`;
        write(element, depth + 1);
        return out.length >= max;
      });
      out += '}';
    } else {
      out += JSON.stringify(item) ?? 'null';
    }
  };
  write(value, 0);
  return out.slice(0, max);
}

/** Maps an error thrown by undici (or an abort) to the closed code set. */
export function codeForTransportError(error: unknown): ErrorCode {
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError ||
    (error instanceof Error && error.name === 'TimeoutError')
  ) {
    return 'UPSTREAM_TIMEOUT';
  }
  if (error instanceof undiciErrors.ResponseExceededMaxSizeError) return 'UPSTREAM_ERROR';
  // A body shorter (or longer) than its Content-Length: the upstream died mid-response or lied.
  if (error instanceof undiciErrors.ResponseContentLengthMismatchError) return 'UPSTREAM_ERROR';
  return 'UPSTREAM_UNAVAILABLE';
}

const TRANSPORT_MESSAGES: Readonly<Record<ErrorCode, string>> = {
  UPSTREAM_TIMEOUT: 'did not answer in time',
  UPSTREAM_UNAVAILABLE: 'could not be reached',
  UPSTREAM_ERROR: 'sent a response that could not be read',
  UNAUTHENTICATED: 'refused the credentials',
  FORBIDDEN: 'refused the request',
  NOT_FOUND: 'has no such resource',
  BAD_USER_INPUT: 'rejected the request',
  UPSTREAM_RATE_LIMITED: 'is rate limiting requests',
  RATE_LIMITED: 'is not asked: the caller has spent its allowance',
};

/** An upstream's name as a reader writes it. */
export function upstreamLabel(name: string): string {
  return name === 'gitlab' ? 'GitLab' : name === 'hubzilla' ? 'Hubzilla' : name;
}

/** The setting that holds an upstream's address, for messages that say what to check. */
export function upstreamSetting(name: string): string {
  return name === 'gitlab' ? 'GITLAB_URL' : name === 'hubzilla' ? 'HUBZILLA_URL' : 'its URL';
}

/** A transport failure's cause (transportCause) in the caller's words: what happened, never a host or a URL. */
function causeWords(cause: string | undefined): string {
  switch (cause) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'connection closed';
    default:
      return cause && /CERT|TLS|SSL/.test(cause) ? 'TLS certificate not accepted' : 'no connection';
  }
}

/** Calls handed to the connection pool, by their info: a write that never got there cannot have been applied. */
const sentCalls = new WeakSet<UpstreamInfo>();

/** A response read whole, before its status is judged. */
interface ReadResponse<T> {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  content: T;
  /** Body bytes read. */
  bytes: number;
}

/** What a whole body becomes, decided in the callback that sees its end; `parsed`: a stored body's parsed form, shared. */
type Decode<T> = (text: string, parsed?: ParsedBody) => T;

/** A JSON body: its value (null for an empty body), or not JSON at all. */
/** `empty`: no body at all, which a 204 or 304 means and a 200 or 201 must not. */
type JsonContent = { parsed: true; value: unknown; empty?: boolean } | { parsed: false };

/** Headers every call carries: the request id and, where the gateway does not trace, the caller's trace context unchanged. */
function addRequestHeaders(headers: Record<string, string>, scope: RequestScope | undefined, tracing: boolean): void {
  if (!scope) return;
  headers['x-request-id'] = scope.requestId;
  if (tracing || !scope.traceparent) return;
  headers.traceparent = scope.traceparent;
  if (scope.tracestate) headers.tracestate = scope.tracestate;
}

const asText: Decode<string> = (text) => text;

function jsonContent(text: string): JsonContent {
  if (text.length === 0) return { parsed: true, value: null, empty: true };
  try {
    return { parsed: true, value: JSON.parse(text) as unknown };
  } catch {
    return { parsed: false };
  }
}

/** Ids of the `select` functions reads in flight were decoded with: only reads decoded alike are shared. */
const selectIds = new WeakMap<(body: unknown) => unknown, string>();
let nextSelectId = 0;

/** What tells two decodes of a body apart, for sharing a read in flight; null for a text read (the answer cache's own path). */
function decodeKeyOf(decode: Decode<unknown>, select: UpstreamRequest['select']): string | null {
  if (decode === asJson) return 'json';
  if (!select) return null;
  let id = selectIds.get(select);
  if (id === undefined) {
    id = `select ${++nextSelectId}`;
    selectIds.set(select, id);
  }
  return id;
}

const asJson: Decode<JsonContent> = (text, parsed) => (parsed ? parsed.get(() => jsonContent(text)) : jsonContent(text));

/** asJson, then `select` on what parsed (it must not change it: a stored body's parsed form is shared). */
function selecting(select: (body: unknown) => unknown): Decode<JsonContent> {
  return (text, parsed) => {
    const content = asJson(text, parsed);
    return content.parsed ? { ...content, value: select(content.value) } : content;
  };
}

export class HttpClient {
  readonly name: string;
  readonly baseUrl: URL;
  /** Calls sent to this upstream since start, successful or not (each retry is a call; a call the breaker refused is not). */
  calls = 0;
  /** The resilience policy in force, defaults filled in. */
  readonly policy: ResiliencePolicy;
  /** Open while the upstream keeps failing: calls then fail fast with UPSTREAM_UNAVAILABLE. */
  readonly breaker: CircuitBreaker;
  /** Caps calls in flight to this upstream. */
  readonly limiter: ConcurrencyLimiter;
  private readonly pool: Pool;
  /** Kept-alive connections of `relay`, beside undici's. */
  private readonly relayPool: RelayPool;
  private readonly basePath: string;
  // The cap applies to JSON and text bodies only: binary downloads stream through, whatever their size.
  private readonly maxResponseBytes: number;
  private readonly onCall: ((call: UpstreamCall) => void) | undefined;
  private readonly routeWords: ReadonlySet<string>;
  private readonly tracer: UpstreamTracer | null;
  /** The answer cache and in-flight sharing of GETs, when configured. */
  readonly cache: AnswerCache | null;
  private readonly gate: RateGate | null;
  private readonly budget: RateBudget | null;
  private readonly identities: GitlabIdentities | null;
  private readonly chargeOf: ((credentials: object | undefined) => string | undefined) | undefined;
  /** The clock of what is remembered about this upstream's logins. */
  readonly now: () => number;

  constructor(options: HttpClientOptions) {
    this.name = options.name;
    this.now = options.now ?? Date.now;
    this.baseUrl = options.baseUrl;
    this.basePath = options.baseUrl.pathname.replace(/\/+$/, '');
    this.policy = {
      ...DEFAULT_POLICY,
      headersTimeoutMs: options.timeoutMs,
      bodyTimeoutMs: options.timeoutMs,
      deadlineMs: options.timeoutMs,
      ...options.policy,
    };
    this.breaker = new CircuitBreaker(this.policy.breakerThreshold, this.policy.breakerResetMs);
    this.limiter = new ConcurrencyLimiter(this.policy.maxConcurrency);
    // undici's defaults are 300 s timeouts and unlimited bodies; all are set here.
    this.pool = new Pool(options.baseUrl.origin, {
      connections: options.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: this.policy.headersTimeoutMs,
      bodyTimeout: this.policy.bodyTimeoutMs,
      connectTimeout: Math.min(this.policy.connectTimeoutMs, this.policy.deadlineMs),
    });
    this.relayPool = new RelayPool(options.connections);
    this.maxResponseBytes = options.maxResponseBytes;
    this.onCall = options.onCall;
    this.routeWords = new Set(options.routeWords ?? []);
    this.tracer = options.tracer ?? null;
    this.cache = options.cache ?? null;
    this.gate = options.gate ?? null;
    this.budget = options.budget ?? null;
    this.identities = options.identities ?? null;
    this.chargeOf = options.chargeOf;
  }

  /**
   * Whom GitLab counts calls with these credentials against (identities.ts):
   * `user:<id>`, `token:<digest>`, ANONYMOUS; null when GitLab refused them.
   * Looks a new credential up once (its call counted as GitLab counts it).
   */
  async whoIs(credentials: Readonly<Record<string, string>>, scope?: RequestScope): Promise<string | null> {
    if (!this.identities) return ANONYMOUS;
    return this.identities.keyOf(credentials, () => this.lookUp({ method: 'GET', path: [], headers: credentials, scope }));
  }

  /** Sends one call and parses a JSON body; any status >= 300 throws an UpstreamError. */
  async json<T>(request: UpstreamRequest): Promise<UpstreamResponse<T>> {
    const path = `${this.basePath}/${encodePath(request.path)}`;
    const info: UpstreamInfo = { name: this.name, status: null, method: request.method, path };
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    const decode = request.select ? selecting(request.select) : asJson;
    const response = await this.read(request, path, headers, info, decode);
    const { content, status } = response;
    const parsed = content.parsed;
    const body = content.parsed ? content.value : null;
    if (status >= 300 && status !== 304) {
      const code = codeForStatus(status);
      // A 5xx body is the upstream's business (stack traces, internal names): its status says enough. A 4xx text
      // is meant for the caller (validation, "403 Forbidden"): kept, capped by upstreamMessage, and scrubbed.
      const message = status >= 500 || !parsed ? null : redact(upstreamMessage(body), request.headers);
      const detail = message === null ? null : scrubText(message);
      const retryAfter = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : null;
      throw new UpstreamError(
        status === 401 && this.name === 'gitlab'
          ? `GitLab refused the token (${detail ?? '401'}): it is wrong, expired or revoked; send a valid one as Private-Token or Authorization: Bearer.`
          : `${this.label()} answered ${status}${detail ? `: ${detail}` : ''}.`,
        code,
        retryAfter === null ? info : { ...info, retryAfterSeconds: Math.ceil(retryAfter / 1000) },
        parsed ? body : null,
      );
    }
    if (!parsed) {
      throw new UpstreamError(`${this.label()} sent a body that is not JSON.`, 'UPSTREAM_ERROR', info);
    }
    // A 200 or 201 says it holds a record: an empty one is the upstream's fault, not a record that does not exist.
    if (content.empty && (status === 200 || status === 201)) {
      throw new UpstreamError(`${this.label()} sent an empty ${status} answer.`, 'UPSTREAM_ERROR', { ...info, status });
    }
    return { status, headers: response.headers, body: body as T };
  }

  /**
   * Sends one call and reads the whole body as text, whatever the status, for
   * upstreams that report failures in 200 bodies (Hubzilla: empty, `false`,
   * `{"success":false}`). Only transport failures and oversize bodies throw.
   */
  async text(request: UpstreamRequest & { accept?: string }): Promise<TextResponse> {
    const path = `${this.basePath}/${encodePath(request.path)}`;
    const info: UpstreamInfo = { name: this.name, status: null, method: request.method, path };
    const headers: Record<string, string> = { accept: request.accept ?? 'application/json', ...request.headers };
    const { status, headers: responseHeaders, content } = await this.read(request, path, headers, info, asText);
    return { status, headers: responseHeaders, text: content, info };
  }

  /**
   * A call read whole: a GET through the answer cache when there is one
   * (stored, shared with a read in flight, or sent and stored), anything
   * else sent as it is. A write drops, for every scope, what it may change,
   * whatever its outcome: one that failed may still have happened.
   */
  private async read<T>(
    request: UpstreamRequest,
    path: string,
    headers: Record<string, string>,
    info: UpstreamInfo,
    decode: Decode<T>,
  ): Promise<ReadResponse<T>> {
    const cache = this.cache;
    if (!cache) return this.execute(request, path, headers, info, decode);
    const decodeKey = request.method === 'GET' && !cache.storing ? decodeKeyOf(decode, request.select) : null;
    if (decodeKey !== null) return this.readDecoded(cache, request, path, headers, info, decode, decodeKey);
    if (request.method !== 'GET') {
      // What a request that writes answers is never kept as a warm answer.
      if (request.scope?.cache) request.scope.cache.sources = null;
      let answer: unknown = null;
      let applied = false;
      try {
        const response = await this.execute(request, path, headers, info, decode);
        // A 4xx is a refusal: nothing changed. A 5xx may come after the change was made.
        applied = response.status < 400 || response.status >= 500;
        const content: unknown = response.content;
        if (content && typeof content === 'object' && 'value' in content) answer = content.value;
        return response;
      } catch (error) {
        // Only a write that went out and got no answer may have happened; one never sent (budget, breaker, no connection) did not.
        applied = sentCalls.has(info) && error instanceof UpstreamError && (error.mayHaveBeenApplied === true || error.cancelled === true);
        throw error;
      } finally {
        // Only what the upstream accepted (or may have) drops answers: a refused write costs nobody their cache.
        if (applied) cache.afterWrite(this.name, request.path, invalidationTags(this.name, request.path, answer));
      }
    }
    const answer = await cache.read(
      {
        ...this.cacheCall(request, path),
        // GitLab reads are keyed by their credential headers alone: the same caller's headers can send them again.
        ...(this.name === 'gitlab' && request.cacheIdentity === undefined && request.scope?.cache?.sources
          ? { again: { path: request.path, query: request.query } }
          : {}),
      },
      async (extraHeaders, signal, onJoin) => {
        const sent = await this.execute({ ...request, signal }, path, { ...headers, ...extraHeaders }, { ...info }, asText, onJoin);
        return { status: sent.status, headers: sent.headers, text: sent.content, bytes: sent.bytes };
      },
      () => this.transportError(new Error('aborted'), info, request.signal),
      (hit) => this.traceHit(request, hit),
    );
    info.status = answer.status;
    return { status: answer.status, headers: answer.headers, content: decode(answer.text, answer.parsed), bytes: answer.bytes };
  }

  /** A GET as the answer cache sees it. */
  private cacheCall(request: UpstreamRequest, path: string): CacheCall {
    return {
      upstream: this.name,
      path: request.path,
      url: path + encodeQuery(request.query),
      credentials: request.headers,
      identity: request.cacheIdentity,
      scope: request.scope,
      claim: request.claim,
      signal: request.signal,
    };
  }

  /** A GET while the cache stores nothing: decoded as it arrives, shared in flight with callers that decode it alike (AnswerCache.readDecoded). */
  private async readDecoded<T>(
    cache: AnswerCache,
    request: UpstreamRequest,
    path: string,
    headers: Record<string, string>,
    info: UpstreamInfo,
    decode: Decode<T>,
    decodeKey: string,
  ): Promise<ReadResponse<T>> {
    const response = await cache.readDecoded(
      this.cacheCall(request, path),
      decodeKey,
      ({ signal, onJoin }) => this.execute({ ...request, signal }, path, headers, { ...info }, decode, onJoin),
      () => this.transportError(new Error('aborted'), info, request.signal),
    );
    info.status = response.status;
    return response;
  }

  /**
   * Reads again, through the answer cache as any GET, what a stored answer
   * answered, with `credentials` (the caller's own: a warm answer checks its
   * sources so, rather than running its operation again). The source it is
   * now, or null where nothing is stored for it (a refusal, a read joined,
   * a failure).
   */
  async reread(call: SourceCall, credentials: Readonly<Record<string, string>>, scope: RequestScope, signal?: AbortSignal): Promise<AnswerSource | null> {
    const usage = newCacheUsage();
    try {
      await this.text({ method: 'GET', path: call.path, query: call.query, headers: credentials, scope: { ...scope, cache: usage }, signal });
    } catch {
      return null;
    }
    return usage.sources?.[0] ?? null;
  }

  /** A span for a GET the cache answered: no call went out, and the trace says so. */
  private traceHit(request: UpstreamRequest, answer: RawAnswer): void {
    if (!this.tracer) return;
    this.startSpan(request, {}).end({ status: answer.status, retries: 0, cache: 'hit' });
  }

  /**
   * Sends one call and hands back the body as a stream, whatever the status:
   * binary routes pass upstream 4xx bodies to the caller unchanged. Only
   * transport failures throw. The deadline covers the headers; the body may
   * take as long as it keeps flowing (undici's body timeout is per chunk).
   * The breaker applies; retries do not (the caller may have sent a Range),
   * and the concurrency slot is held until the headers arrive.
   */
  async stream(request: BinaryRequest): Promise<StreamResponse> {
    const { path, info, headers, release } = await this.binaryCall(request);
    const span = this.tracer ? this.startSpan(request, headers) : null;
    try {
      const response = await this.send(request, path, headers, request.signal, info);
      this.judge(response.statusCode);
      const flat = flattenHeaders(response.headers);
      this.learn(request, response.statusCode, flat);
      span?.end({ status: response.statusCode, retries: 0, upstreamRequestId: upstreamRequestId(flat['x-request-id']) });
      return { status: response.statusCode, headers: flat, body: response.body };
    } catch (error) {
      this.judgeError(error, request.signal);
      span?.end({ status: error instanceof UpstreamError ? (error.cancelled ? 'client_closed' : error.code) : 'error', retries: 0 });
      throw error;
    } finally {
      release();
    }
  }

  /**
   * A look at the upstream for the gateway itself (the start's banner,
   * /readyz): a GET without credentials, sent past the rate gate, the
   * budgets, the refusal table and the tracer, and whose answer teaches none
   * of them: the gateway's own checks never hold back a caller's calls, even
   * where the upstream throttles the gateway's address. Resolves with the
   * status; a call that got no answer throws an UpstreamError that says why.
   */
  async probe(path: PathSegments, timeoutMs: number): Promise<number> {
    const info: UpstreamInfo = { name: this.name, status: null, method: 'GET', path: `${this.basePath}/${encodePath(path)}` };
    try {
      const response = await this.pool.request({
        method: 'GET',
        path: info.path,
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      const code = codeForTransportError(error);
      throw new UpstreamError(this.transportMessage(code, error), code, info);
    }
  }

  /**
   * GETs a binary resource and relays its body into the sink `onHead`
   * returns (relay.ts: reused read buffers, for bodies of any size),
   * whatever the status. Breaker, slot and no retries as for `stream`.
   * Resolves once the whole body has been sent on; an UpstreamError after
   * `onHead` ran means the sink got part of the body only.
   */
  async relay(request: BinaryRequest, onHead: (head: RelayHead) => RelaySink | null): Promise<void> {
    const call = await this.binaryCall(request);
    const { path, info, headers } = call;
    let release: (() => void) | null = call.release;
    let span = this.tracer ? this.startSpan(request, headers) : null;
    this.calls++;
    const started = performance.now();
    try {
      await relay(
        {
          url: new URL(path + encodeQuery(request.query), this.baseUrl.origin),
          headers,
          connectTimeoutMs: Math.min(this.policy.connectTimeoutMs, this.policy.deadlineMs),
          headersTimeoutMs: this.policy.headersTimeoutMs,
          bodyTimeoutMs: this.policy.bodyTimeoutMs,
          signal: request.signal,
          onHead: (head) => {
            info.status = head.status;
            const requestId = head.headers['x-request-id'];
            this.observe(request, head.status, started, requestId);
            span?.end({ status: head.status, retries: 0, upstreamRequestId: upstreamRequestId(requestId) });
            span = null;
            this.judge(head.status);
            release?.();
            release = null;
            return onHead(head);
          },
        },
        this.relayPool,
      );
    } catch (error) {
      const code = error instanceof RelayError ? error.code : 'UPSTREAM_UNAVAILABLE';
      const failure = new UpstreamError(this.transportMessage(code, error instanceof RelayError ? error.cause : error), code, info);
      // A body cut short was already counted as a call by its head.
      span?.end({ status: request.signal?.aborted ? 'client_closed' : code, retries: 0 });
      if (!(error instanceof RelayError && error.afterHead)) {
        this.observe(request, code, started);
        this.judgeError(failure, request.signal);
      }
      throw failure;
    } finally {
      release?.();
    }
  }

  /** The start of a binary call (stream, relay): its path, headers and error info, past the breaker and holding a slot, waited for within the deadline. */
  private async binaryCall(request: BinaryRequest): Promise<{ path: string; info: UpstreamInfo; headers: Record<string, string>; release: () => void }> {
    const path = `${this.basePath}/${encodePath(request.path)}`;
    const info: UpstreamInfo = { name: this.name, status: null, method: request.method, path };
    const headers: Record<string, string> = { accept: request.accept ?? '*/*', ...request.headers };
    if (request.range) headers.range = request.range;
    if (request.ifNoneMatch) headers['if-none-match'] = request.ifNoneMatch;
    // A body streamed past the answer cache: nothing built on it can be judged later.
    if (request.scope?.cache) request.scope.cache.sources = null;
    addRequestHeaders(headers, request.scope, this.tracer !== null);
    this.enterGate(request, info);
    this.enterRefused(request, info);
    if (this.budget?.active) await this.spend(request, info);
    this.enterBreaker(info);
    const slotDeadline = deadline(this.policy.deadlineMs, request.signal);
    try {
      const slot = this.slot(slotDeadline.signal, info, request.signal);
      return { path, info, headers, release: typeof slot === 'function' ? slot : await slot };
    } finally {
      slotDeadline.dispose();
    }
  }

  /**
   * One call under the whole policy: the breaker, a concurrency slot, the
   * call's deadline (its own plus the caller's signal), and for GET the
   * retries with jittered back-off on a connection error, a 429 (after its
   * Retry-After) or a 502/503/504, as long as the wait fits the deadline.
   * Resolves with the last response read whole, whatever its status.
   */
  private async execute<T>(
    request: CallRequest,
    path: string,
    headers: Record<string, string>,
    info: UpstreamInfo,
    decode: Decode<T>,
    onJoin?: (listener: (joiner: unknown) => void) => void,
  ): Promise<ReadResponse<T>> {
    addRequestHeaders(headers, request.scope, this.tracer !== null);
    if (!this.tracer) return this.attempts(request, path, headers, info, decode, null);
    const tally = { retries: 0 };
    const span = this.startSpan(request, headers);
    let ended = false;
    onJoin?.((joiner) => {
      if (!ended && joiner) span.link?.(joiner as RequestScope);
    });
    try {
      const response = await this.attempts(request, path, headers, info, decode, tally);
      ended = true;
      span.end({
        status: response.status,
        retries: tally.retries,
        bytes: response.bytes,
        upstreamRequestId: upstreamRequestId(response.headers['x-request-id']),
        ...(this.cache && request.method === 'GET' ? { cache: response.status === 304 ? ('revalidated' as const) : ('miss' as const) } : {}),
      });
      return response;
    } catch (error) {
      ended = true;
      span.end({
        status: error instanceof UpstreamError ? (info.status ?? (error.cancelled ? 'client_closed' : error.code)) : 'error',
        retries: tally.retries,
      });
      throw error;
    }
  }

  private startSpan(request: CallRequest, headers: Record<string, string>): UpstreamSpan {
    const describe = (): UpstreamSpanCall => ({
      upstream: this.name,
      method: request.method,
      route: routeTemplate(request.path, this.routeWords),
      breaker: this.breaker.state,
    });
    return (this.tracer as UpstreamTracer).start(describe, headers, request.scope);
  }

  /** The attempts of `execute` (see there); counts retries into `tally` when given. */
  private async attempts<T>(
    request: CallRequest,
    path: string,
    headers: Record<string, string>,
    info: UpstreamInfo,
    decode: Decode<T>,
    tally: { retries: number } | null,
  ): Promise<ReadResponse<T>> {
    // One frame for the attempts and no attempt frame before a slot is free: a call waiting its
    // turn holds only what it needs, which counts when thousands queue at once.
    const started = Date.now();
    const callDeadline = deadline(this.policy.deadlineMs, request.signal);
    const signal = callDeadline.signal;
    try {
      // Never a retry of a write: a POST that timed out may well have happened.
      const retries = request.method === 'GET' ? this.policy.retries : 0;
      let cutRetried = false;
      for (let attempt = 0; ; attempt++) {
        let result: ReadResponse<T> | null = null;
        let failure: UpstreamError | null = null;
        try {
          // Retries wait out a short Retry-After themselves; only the first attempt asks the gate.
          if (attempt === 0) {
            this.enterGate(request, info);
            this.enterRefused(request, info);
          }
          // Every attempt is a call GitLab counts.
          if (this.budget?.active) await this.spend(request, info);
          this.enterBreaker(info);
          const slot = this.slot(signal, info, request.signal);
          result = await this.attempt(request, path, headers, signal, info, decode, typeof slot === 'function' ? slot : await slot);
          this.learn(request, result.status, result.headers);
        } catch (error) {
          if (!(error instanceof UpstreamError)) throw error;
          failure = error;
        }
        // A GET whose answer was cut mid-body is asked once more: a dropped connection, not an answer to repeat three times.
        const retryCut = failure?.cutShort === true && !signal.aborted && !cutRetried;
        if (retryCut) cutRetried = true;
        const retryable = failure
          ? retryCut || (failure.code === 'UPSTREAM_UNAVAILABLE' && !failure.fastFail && !signal.aborted)
          : RETRY_STATUSES.has(result?.status ?? 0);
        if (attempt >= retries || !retryable) {
          if (failure) throw failure;
          return result as ReadResponse<T>;
        }
        const hinted = result ? parseRetryAfter(result.headers['retry-after']) : null;
        const wait = hinted ?? backoffDelay(attempt, this.policy.retryBaseMs, this.policy.retryMaxDelayMs);
        const left = this.policy.deadlineMs - (Date.now() - started);
        if (wait > this.policy.retryMaxDelayMs || wait >= left) {
          if (failure) throw failure;
          return result as ReadResponse<T>;
        }
        try {
          await sleep(wait, signal);
        } catch (error) {
          throw this.transportError(error, info, request.signal);
        }
        if (tally) tally.retries = attempt + 1;
      }
    } finally {
      callDeadline.dispose();
    }
  }

  /** One attempt, past the breaker and holding a slot (`release`): request, whole body read (capped). */
  private async attempt<T>(
    request: CallRequest,
    path: string,
    headers: Record<string, string>,
    signal: CallSignal,
    info: UpstreamInfo,
    decode: Decode<T>,
    release: () => void,
  ): Promise<ReadResponse<T>> {
    try {
      const response = await this.send(request, path, headers, signal, info);
      info.status = response.statusCode;
      let read: { value: T; bytes: number };
      try {
        read = await readCapped(response.body, this.maxResponseBytes, decode);
      } catch (error) {
        if (error instanceof UpstreamError)
          throw new UpstreamError(`${this.label()} sent a body larger than ${this.maxResponseBytes} bytes.`, 'UPSTREAM_ERROR', info);
        if (signal.aborted) throw this.transportError(error, info, request.signal);
        // The head came, then the connection broke off: GitLab was reached, its answer did not arrive whole.
        const cut = new UpstreamError(`${this.label()}'s answer was cut short: the connection closed before its body was whole.`, 'UPSTREAM_ERROR', info);
        cut.cutShort = true;
        throw cut;
      }
      this.judge(response.statusCode);
      return { status: response.statusCode, headers: flattenHeaders(response.headers), content: read.value, bytes: read.bytes };
    } catch (error) {
      this.judgeError(error, request.signal);
      throw error;
    } finally {
      release();
    }
  }

  /** Throws a fast UPSTREAM_RATE_LIMITED while GitLab's rate limit for this scope (or route) has not reset. */
  private enterGate(request: CallRequest, info: UpstreamInfo): void {
    const left = this.gate?.closedFor(this.name, request.headers, routeTemplate(request.path, this.routeWords)) ?? 0;
    if (left > 0) throw this.rateLimited(`${this.label()} is rate limiting these credentials`, left, info);
  }

  /** What an answer teaches: a 429 closes its scope (rate-gate.ts), a limit GitLab names is learnt, a 401 refuses the credentials for a while. */
  private learn(request: CallRequest, status: number, headers: Readonly<Record<string, string | undefined>>): void {
    this.gate?.observe(this.name, request.headers, routeTemplate(request.path, this.routeWords), status, headers);
    this.budget?.observe(headers, () => request.budgetKey ?? this.identities?.known(request.headers) ?? null);
    if (status === 401) this.identities?.refused(request.headers);
  }

  /** Throws a fast UNAUTHENTICATED while GitLab's recent 401 for these credentials stands: asking again would only count against the gateway's address. */
  private enterRefused(request: CallRequest, info: UpstreamInfo): void {
    const left = this.identities?.refusedFor(request.headers) ?? 0;
    if (left <= 0) return;
    const seconds = Math.ceil(left / 1000);
    const error = new UpstreamError(`${this.label()} refused these credentials (401); they are not sent again for ${seconds} s.`, 'UNAUTHENTICATED', {
      ...info,
      status: null,
      retryAfterSeconds: seconds,
    });
    error.fastFail = true;
    throw error;
  }

  /**
   * Takes the call from the budget of whom GitLab counts it against, or
   * throws a fast UPSTREAM_RATE_LIMITED: spent, or (for background work)
   * down to the reserve. Credentials not yet known are looked up first.
   */
  private async spend(request: CallRequest, info: UpstreamInfo): Promise<void> {
    const budget = this.budget as RateBudget;
    let who = request.budgetKey;
    if (who === undefined) {
      who = await this.whoCounts(request, info);
      // Now that GitLab's user is known, a 429 another of its tokens drew holds this one back too.
      this.enterGate(request, info);
    }
    const left = await budget.take(who, request.background === true, request.scope?.clientAddress);
    if (left === 0) return;
    const whose =
      left < 0
        ? 'of anonymous callers (and credentials GitLab has not yet accepted) from this address, its share of the anonymous budget (ANONYMOUS_SHARE_PER_ADDRESS),'
        : who === ANONYMOUS
          ? 'of anonymous callers and of credentials GitLab has not yet accepted'
          : 'of this GitLab user';
    throw this.rateLimited(`The ${this.label()} call budget ${whose} is spent for this minute`, Math.abs(left), info);
  }

  /** Whom GitLab counts the call against (identities.ts), looking the credentials up once; the anonymous budget without identities. */
  private async whoCounts(request: CallRequest, info: UpstreamInfo): Promise<string> {
    if (!this.identities) return ANONYMOUS;
    const who = await this.identities.keyOf(request.headers, () => this.lookUp(request));
    if (who === null) this.enterRefused(request, info);
    return who ?? ANONYMOUS;
  }

  /**
   * Asks GitLab who the credentials are (`/user`, or `/job` for a job token),
   * Sudo left out (Rack::Attack counts the token's own user). Taken from the
   * anonymous budget, where GitLab counts it until it knows the token; once
   * GitLab named the user, moved to that user's budget. Never cached.
   */
  private async lookUp(request: CallRequest): Promise<LookupResult> {
    const credentials = Object.fromEntries(Object.entries(request.headers ?? {}).filter(([name]) => name !== 'sudo'));
    const path = lookupPath(credentials);
    const fullPath = `${this.basePath}/${encodePath(path)}`;
    const lookup: UpstreamRequest = { method: 'GET', path, headers: credentials, scope: request.scope, background: request.background, budgetKey: ANONYMOUS };
    const info: UpstreamInfo = { name: this.name, status: null, method: 'GET', path: fullPath };
    const response = await this.execute(lookup, fullPath, { accept: 'application/json', ...credentials }, info, asJson);
    const userId = response.status === 200 && response.content.parsed ? lookupUserId(path, response.content.value) : null;
    if (userId !== null) await this.budget?.move(ANONYMOUS, `user:${userId}`, request.scope?.clientAddress);
    return { status: response.status, userId };
  }

  private rateLimited(what: string, leftMs: number, info: UpstreamInfo): UpstreamError {
    const seconds = Math.ceil(leftMs / 1000);
    const error = new UpstreamError(`${what}; no call is sent for ${seconds} s.`, 'UPSTREAM_RATE_LIMITED', {
      ...info,
      status: null,
      retryAfterSeconds: seconds,
    });
    error.fastFail = true;
    return error;
  }

  /** Throws a fast UPSTREAM_UNAVAILABLE while the breaker is open. */
  private enterBreaker(info: UpstreamInfo): void {
    if (this.breaker.tryAcquire()) return;
    const seconds = Math.ceil(this.breaker.retryInMs / 1000);
    const error = new UpstreamError(`${this.label()} is failing; calls are paused for ${seconds} s.`, 'UPSTREAM_UNAVAILABLE', { ...info, status: null });
    error.fastFail = true;
    throw error;
  }

  /** A concurrency slot: at once when one is free (no promise to wait on), else within the call's deadline. */
  private slot(signal: CallSignal, info: UpstreamInfo, callerSignal?: CallSignal): (() => void) | Promise<() => void> {
    if (!signal.aborted) {
      const free = this.limiter.tryAcquire();
      if (free) return free;
    }
    return this.waitForSlot(signal, info, callerSignal);
  }

  private waitForSlot(signal: CallSignal, info: UpstreamInfo, callerSignal?: CallSignal): Promise<() => void> {
    return this.limiter.acquire(signal).catch((error: unknown) => {
      // The probe reserved by enterBreaker never went out.
      this.breaker.onNeutral();
      throw this.transportError(error, info, callerSignal);
    });
  }

  private judge(status: number): void {
    if (BREAKER_STATUSES.has(status)) this.breaker.onFailure();
    else this.breaker.onSuccess();
  }

  private judgeError(error: unknown, callerSignal: CallSignal | undefined): void {
    if (error instanceof UpstreamError && error.fastFail) return;
    // A caller that went away says nothing about the upstream; nor does a body judged on its content.
    if (callerSignal?.aborted) this.breaker.onNeutral();
    else if (error instanceof UpstreamError && error.code === 'UPSTREAM_ERROR') this.breaker.onSuccess();
    else this.breaker.onFailure();
  }

  private transportError(error: unknown, info: UpstreamInfo, callerSignal?: CallSignal): UpstreamError {
    if (error instanceof UpstreamError) return error;
    if (callerSignal?.aborted) {
      // The caller hung up: the call was abandoned, the upstream did nothing wrong.
      const cancelled = new UpstreamError(`The caller closed the request; the ${this.label()} call was cancelled.`, 'UPSTREAM_UNAVAILABLE', info);
      cancelled.cancelled = true;
      return cancelled;
    }
    const code = codeForTransportError(error);
    // A write that went out and got no answer may have been applied; one that never connected was not.
    const unanswered = (code === 'UPSTREAM_TIMEOUT' && !(error instanceof undiciErrors.ConnectTimeoutError)) || error instanceof undiciErrors.SocketError;
    if (unanswered && info.method !== 'GET' && info.method !== 'HEAD') {
      const failure = new UpstreamError(`${this.label()} ${TRANSPORT_MESSAGES[code]}; the write may have been applied.`, code, info);
      failure.mayHaveBeenApplied = true;
      return failure;
    }
    return new UpstreamError(this.transportMessage(code, error), code, info);
  }

  /** What the caller reads of a transport failure; one that could not connect says why and which setting names the address. */
  private transportMessage(code: ErrorCode, error: unknown): string {
    if (code !== 'UPSTREAM_UNAVAILABLE') return `${this.label()} ${TRANSPORT_MESSAGES[code]}.`;
    return `${this.label()} could not be reached (${causeWords(transportCause(error))}): check ${upstreamSetting(this.name)}, or retry later.`;
  }

  private async send(
    request: CallRequest,
    path: string,
    headers: Record<string, string>,
    signal: CallSignal | undefined,
    info: UpstreamInfo,
  ): Promise<Dispatcher.ResponseData> {
    let body: string | Readable | undefined;
    if (request.body instanceof MultipartBody) {
      body = request.body.toStream();
      headers['content-type'] = request.body.contentType;
    } else if (request.body instanceof URLSearchParams) {
      body = request.body.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] = 'application/json';
    }
    this.calls++;
    sentCalls.add(info);
    const started = performance.now();
    try {
      const response = await this.pool.request({ method: request.method, path: path + encodeQuery(request.query), headers, body, signal });
      this.observe(request, response.statusCode, started, response.headers['x-request-id']);
      return response;
    } catch (error) {
      const failure = this.transportError(error, info, request.signal);
      this.observe(request, failure.cancelled ? 'client_closed' : failure.code, started, undefined, failure.cancelled ? undefined : transportCause(error));
      throw failure;
    }
  }

  private observe(request: CallRequest, status: number | string, started: number, requestIdHeader?: string | string[], cause?: string): void {
    if (!this.onCall) return;
    const call: UpstreamCall = {
      upstream: this.name,
      method: request.method,
      route: routeTemplate(request.path, this.routeWords),
      status,
      durationMs: performance.now() - started,
    };
    const upstreamId = upstreamRequestId(typeof requestIdHeader === 'string' ? requestIdHeader : requestIdHeader?.[0]);
    if (upstreamId) call.upstreamRequestId = upstreamId;
    if (request.scope) call.scope = request.scope;
    else if (this.chargeOf) {
      const chargeTo = this.chargeOf(request.headers);
      if (chargeTo) call.chargeTo = chargeTo;
    }
    if (cause) call.cause = cause;
    this.onCall(call);
  }

  /** Closes the pool's connections. */
  async close(): Promise<void> {
    this.relayPool.close();
    await this.pool.close();
  }

  private label(): string {
    return upstreamLabel(this.name);
  }
}

/**
 * Reads a whole body, at most `max` bytes, and decodes it in the callback
 * that sees its end: the text never outlives that callback.
 *
 * Once settled, the listeners let go of the promise (and so of the decoded
 * value): they stay on undici's body after the read, and while anything
 * still reaches that body, a listener holding `resolve` keeps the whole
 * parsed page alive with it, through young collections into the old
 * generation (on the 100x20 benchmark at one client, letting go halved the
 * scavenge time). undici's own body.json() resets its state likewise.
 */
function readCapped<T>(body: Dispatcher.ResponseData['body'], max: number, decode: Decode<T>): Promise<{ value: T; bytes: number }> {
  // The listeners see only this scope: resolve and reject live in the executor's, reachable through
  // `settle` until it is cleared.
  let settle: ((outcome: { value: T; bytes: number } | { error: unknown }) => void) | null = null;
  const done = new Promise<{ value: T; bytes: number }>((resolve, reject) => {
    settle = (outcome) => {
      settle = null;
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome);
    };
  });
  let chunks: Buffer[] = [];
  let size = 0;
  body.on('data', (chunk: Buffer) => {
    if (!settle) return;
    size += chunk.length;
    if (size > max) {
      chunks = [];
      body.destroy();
      settle({ error: new UpstreamError('too large', 'UPSTREAM_ERROR', { name: '', status: null, method: '', path: '' }) });
      return;
    }
    chunks.push(chunk);
  });
  body.once('end', () => {
    if (!settle) return;
    // Most JSON bodies come in one chunk: decode it where it lies rather than copy it first.
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    chunks = [];
    // A throw here would escape the listener and take the process down: it fails the call instead.
    let value: T;
    try {
      value = decode(bytes.toString('utf8'));
    } catch (error) {
      settle({ error });
      return;
    }
    settle({ value, bytes: size });
  });
  body.once('error', (error) => settle?.({ error }));
  // A body closed without an end or an error (destroyed from outside) must not leave the call waiting.
  body.once('close', () => {
    if (!body.readableEnded) settle?.({ error: new Error('the upstream body closed before its end') });
  });
  return done;
}

/**
 * POSTs JSON to URLs an operator allowed (a router's subscription callback
 * URLs): keep-alive connections per origin, the same connect, headers and
 * body timeouts as an upstream, no redirects followed (a redirect could
 * lead anywhere), and nothing of the answer read but its status.
 */
export class JsonPoster {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
    this.agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 30_000 });
  }

  /** Resolves with the answer's status; rejects, naming the origin and the transport's cause, when none came. */
  async post(url: URL, json: string, headers: Readonly<Record<string, string>>): Promise<number> {
    try {
      const response = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(json)) },
        body: json,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      // The cause only (ECONNREFUSED, a timeout): nothing the other end wrote.
      throw new Error(`${url.origin} could not be reached (${transportCause(error) ?? codeForTransportError(error)})`);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Removes any credential the caller sent from text an upstream wrote, in case it echoes one. */
function redact(text: string | null, credentials: Readonly<Record<string, string>> | undefined): string | null {
  if (text === null || !credentials) return text;
  let clean = text;
  for (const [name, value] of Object.entries(credentials)) {
    // Sudo names a user, not a secret: GitLab's "user 'x' not found" stays readable.
    if (name === 'sudo') continue;
    const secret = value.replace(/^Bearer\s+/i, '');
    if (secret.length >= 4) clean = clean.split(secret).join('[redacted]');
  }
  return clean;
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const key in headers) {
    const value = headers[key];
    flat[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
