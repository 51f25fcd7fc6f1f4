/**
 * The request a piece of work belongs to: its id, for log lines and upstream
 * calls, the caller's W3C trace context, which upstream calls pass on
 * unchanged when the gateway does not trace, and the span (when tracing)
 * that upstream calls start under. Handed down explicitly, from the HTTP
 * request or graphql-ws connection through the GraphQL context to the
 * upstream clients: AsyncLocalStorage would do it implicitly, but on Node 20
 * it costs about 8% of the CPU of the 100x20 query (bench/tracing.ts), for
 * every request, traced or not.
 */
import { randomUUID } from 'node:crypto';
import { scrubText } from './scrub.js';

export interface RequestScope {
  /** The caller's valid `X-Request-Id`, else a new UUID. */
  readonly requestId: string;
  /** The caller's `traceparent`, when valid. */
  readonly traceparent?: string;
  /** The caller's `tracestate`, kept only beside a valid `traceparent`. */
  readonly tracestate?: string;
  /** The span upstream calls start under (server/tracing.ts sets it: the request's, then the operation's); opaque here. */
  span?: unknown;
  /** The trace id of `span`, while one is recorded, for log lines. */
  traceId?: string;
  /** The oldest cached upstream answer the caller accepts, in ms (its `Cache-Control: no-cache` is 0, `max-age=N` N s); unset: each family's own age. */
  cacheMaxAgeMs?: number;
  /** What the answer cache did for this request: shared by its operations, read for its response headers and `extensions.upstreamCache`. */
  cache?: CacheUsage;
  /** Header or connectionParams names that look like credentials but are not read as any (`private_token`), for the result's hint. */
  ignoredCredentials?: string[];
  /** The address the request came from (client-address.ts): what anonymous and unverified callers are counted by. */
  clientAddress?: string;
  /** The caller's key in the inbound allowance (INBOUND_CALLS_PER_MINUTE), once known: a GitLab user, a verified Hubzilla channel, else its address. */
  inboundKey?: string;
  /** Upstream calls this operation sent, for the inbound allowance to settle what it reserved. */
  inboundSpent?: number;
}

/**
 * A field that read stored answers itself, with what it was resolved on: a
 * kept answer whose only changed reads are some fields' own is brought up
 * to date by resolving those fields again, not the whole operation
 * (server/warm-answers.ts). `field` is the resolver's info, opaque here.
 */
export interface Claim {
  /** The field's place in the answer: response keys and list indexes. */
  readonly path: readonly (string | number)[];
  readonly parent: unknown;
  readonly field: unknown;
  /** The stored answers its resolver read (the same objects as in CacheUsage.sources). */
  readonly sources: AnswerSource[];
}

/** Upstream reads of one request by how they were served. */
export interface CacheUsage {
  /** Served from a stored answer. */
  hits: number;
  /** Served from a stored answer after the upstream confirmed it (304 to If-None-Match). */
  revalidated: number;
  /** Served by a read already in flight for another caller. */
  joined: number;
  /** Sent to the upstream and answered in full. */
  misses: number;
  /** The least time, in ms, any stored answer used stays within its plain maximum age; null when none was used. */
  freshForMs: number | null;
  /**
   * The stored answers the request read, for the warm-answer layer to tell
   * later whether each would still be served; null once it read anything
   * that cannot be judged so (a write, a read joined or not stored).
   */
  sources: AnswerSource[] | null;
  /** When (ms since the epoch) an answer built from these reads stops being servable whatever their age: a Hubzilla login's proof ends. */
  servableUntil: number;
  /** The fields that read stored answers themselves, while an answer built from these reads may be kept; else unset. */
  claims?: Claim[];
}

/** One stored upstream answer a request read: what decides whether it would still be served. */
export interface AnswerSource {
  status: number;
  storedAt: number;
  tags: readonly string[];
  origin: string;
  seq: number;
  /** The project whose job or pipeline webhooks may let it live longer. */
  webhook?: { projectId: number; kind: 'jobs' | 'pipelines' };
  /** What it holds: its body's digest and the headers a caller reads. The same version read again is the same answer. */
  version?: string;
  /** The GET it answers, where the same caller's credentials can send it again (a warm answer's check): GitLab reads only. */
  call?: SourceCall;
}

/** A GET of a stored answer: its path segments and query, as the upstream client takes them. */
export interface SourceCall {
  readonly path: readonly (string | number)[];
  readonly query?: Readonly<Record<string, string | number | boolean | readonly (string | number)[] | null | undefined>>;
}

export function newCacheUsage(): CacheUsage {
  return { hits: 0, revalidated: 0, joined: 0, misses: 0, freshForMs: null, sources: [], servableUntil: Number.POSITIVE_INFINITY };
}

/**
 * The maximum age a request's `Cache-Control` asks of cached answers, in ms:
 * `no-cache`, `no-store` and `max-age=0` are 0, `max-age=N` is N seconds;
 * anything else (or nothing) leaves each family's own age.
 */
export function requestedMaxAgeMs(value: string | undefined | null): number | undefined {
  if (!value) return undefined;
  let age: number | undefined;
  for (const directive of value.toLowerCase().split(',')) {
    const [name, arg] = directive
      .trim()
      .split('=', 2)
      .map((part) => part.trim());
    if (name === 'no-cache' || name === 'no-store') return 0;
    if (name === 'max-age' && arg !== undefined && /^\d{1,9}$/.test(arg)) age = Math.min(age ?? Number.POSITIVE_INFINITY, Number(arg) * 1000);
  }
  return age;
}

/** What an id from a caller may hold: printable, no spaces or quotes, short enough for a log line (GitLab takes 128 too). */
const VALID_ID = /^[A-Za-z0-9._~:@+=/-]{1,128}$/;
/** W3C trace context, version 00: trace id and parent id not all zero. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
/** tracestate: list members of printable characters, at most 512 bytes as the W3C spec lets a vendor cut it. */
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

function first(header: string | readonly string[] | undefined | null): string | undefined {
  return typeof header === 'string' ? header : (header?.[0] ?? undefined);
}

/** The scope of a request with these headers: its id (the caller's when valid), its valid trace context. */
export function requestScopeFrom(headers: Readonly<Record<string, string | readonly string[] | undefined>>): RequestScope {
  const given = first(headers['x-request-id'])?.trim();
  // An id shaped like a credential (`glpat-…` passes VALID_ID) is replaced, not echoed, forwarded, logged or traced.
  const requestId = given && VALID_ID.test(given) && scrubText(given) === given ? given : randomUUID();
  const cacheMaxAgeMs = requestedMaxAgeMs(first(headers['cache-control']));
  const scope: { -readonly [K in keyof RequestScope]: RequestScope[K] } = cacheMaxAgeMs === undefined ? { requestId } : { requestId, cacheMaxAgeMs };
  const traceparent = first(headers.traceparent)?.trim().toLowerCase();
  if (!traceparent || !TRACEPARENT.test(traceparent)) return scope;
  scope.traceparent = traceparent;
  const tracestate = first(headers.tracestate)?.trim();
  if (tracestate && TRACESTATE.test(tracestate)) scope.tracestate = tracestate;
  return scope;
}

/** A response header value an upstream sent as its request id, if it looks like one: never echoed unchecked into a log. */
export function upstreamRequestId(value: string | undefined): string | undefined {
  const id = value?.trim();
  return id && VALID_ID.test(id) ? scrubText(id) : undefined;
}
