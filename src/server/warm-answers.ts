/**
 * Warm answers: the serialised answer of a query, kept per credential scope
 * with the stored upstream answers it was built from, and served again
 * without parsing, validating or executing anything while every one of
 * those would still be served (answer-cache.ts: no answer older than its
 * family's age or the caller's Cache-Control, every drop in every instance
 * honoured, a Hubzilla login's proof still current). Anything else the
 * answer rests on (a write, a read joined or not stored, a streamed body,
 * an error) keeps it from being kept.
 *
 * Keys are an HMAC (the fleet's key secret) of the credentials, the header
 * names that change an answer's hints, the Accept header and the
 * operation's parameters: nothing kept names a token, and two scopes never
 * share an answer. Kept in this process only, bounded in bytes: the
 * stored upstream answers behind them may live in Redis for the fleet.
 *
 * Every GET answer also gets its validator here (its text's digest), which
 * cache-headers.ts sends as the ETag and compares with If-None-Match.
 */
import { createHash, createHmac } from 'node:crypto';
import { type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { AnswerSource, RequestScope } from '../request-scope.js';
import type { AnswerCache } from '../upstreams/answer-cache.js';
import { extensionMaxAgeMs } from './cache-headers.js';
import { nearMissCredentials } from './credentials.js';

/** One kept answer. */
interface WarmAnswer {
  text: string;
  /** The strong validator of `text`, quoted. */
  etag: string;
  sources: readonly AnswerSource[];
  servableUntil: number;
  /** The operation's name, for the metrics of operations. */
  operationName: string | undefined;
}

/** What a request holds while it is served: its key, and the answer served warm or to be kept. */
interface Pending {
  /** Null where nothing is kept (only the GET's validator is wanted). */
  key: string | null;
  warm?: WarmAnswer;
  /** False once the operation turned out not to be a query. */
  query: boolean;
  operationName?: string;
  /** The validator of what was sent (GET only), for cache-headers.ts. */
  etag?: string;
}

/** Headers whose values change an answer (its credentials, its media type); every other header changes it only by its name (hints). */
const VALUE_HEADERS = ['accept', 'authorization', 'private-token', 'job-token', 'sudo', 'x-hubzilla-authorization'];
/** Query parameters a GitLab credential may come in (credentials.ts). */
const CREDENTIAL_PARAMETERS = ['private_token', 'access_token', 'sudo', 'job_token'];
/** Bytes an answer's sources are counted as each, besides its text. */
const SOURCE_BYTES = 160;

export interface WarmAnswersOptions {
  cache: AnswerCache;
  keySecret: string;
  /** Bytes the kept answers may hold (a quarter of CACHE_MAX_BYTES), least recently used out first. */
  maxBytes: number;
  now?: () => number;
  /** Counts each answer served warm, kept, or found stale. */
  observe?: (outcome: 'served' | 'kept' | 'stale') => void;
  /** Hears of each query answered warm: its name, its request, and how long serving it took. */
  onServed?: (operationName: string | undefined, request: Request, seconds: number) => void;
}

export class WarmAnswers {
  private readonly answers: LRUCache<string, WarmAnswer>;
  private readonly pending = new WeakMap<Request, Pending>();
  private readonly now: () => number;

  constructor(private readonly options: WarmAnswersOptions) {
    this.now = options.now ?? Date.now;
    this.answers = new LRUCache<string, WarmAnswer>({
      maxSize: Math.max(1, options.maxBytes),
      // V8 keeps a JSON text of ASCII in one byte a character; two for the rest.
      sizeCalculation: (answer) => answer.text.length * 2 + answer.sources.length * SOURCE_BYTES + 200,
      perf: { now: this.now },
      ttlResolution: 0,
    });
  }

  /** The validator of the answer sent for `request`, when it was a GET answer read whole. */
  etagOf(request: Request): string | undefined {
    return this.pending.get(request)?.etag;
  }

  plugin(): Plugin {
    return {
      onParams: ({ request, params, setResult, context }) => {
        const get = request.method === 'GET';
        if (!get && request.method !== 'POST') return;
        const started = performance.now();
        const extensions = params.extensions as Record<string, unknown> | undefined;
        // Only where upstream answers are stored; never for a caller asking how its upstream reads were served.
        const keeping = this.options.cache.storing && extensions?.upstreamCache !== true;
        const scope = (context as { scope?: RequestScope }).scope;
        if (!scope?.cache || (!keeping && !get)) return;
        const pending: Pending = { key: keeping ? this.keyOf(request, params, extensions) : null, query: true };
        this.pending.set(request, pending);
        const answer = pending.key === null ? undefined : this.answers.get(pending.key);
        if (!answer) return;
        const callerAge = extensionMaxAgeMs(extensions) ?? scope.cacheMaxAgeMs;
        const freshFor = this.now() < answer.servableUntil ? this.options.cache.stillServed(answer.sources, callerAge) : null;
        if (freshFor === null) {
          this.options.observe?.('stale');
          return;
        }
        this.options.observe?.('served');
        this.options.onServed?.(answer.operationName, request, (performance.now() - started) / 1000);
        pending.warm = answer;
        pending.etag = answer.etag;
        scope.cache.freshForMs = freshFor;
        scope.cache.sources = null;
        // Yoga's result processors write what `stringify` returns: the kept text, in whichever media type was agreed.
        // Yoga's type of a result with its own serialiser (ExecutionResultWithSerializer) is not exported.
        const warm: ExecutionResult & { stringify: () => string } = { stringify: () => answer.text };
        setResult(warm);
      },
      onExecute: ({ args }) => {
        const request = (args.contextValue as { request?: Request }).request;
        const pending = request && this.pending.get(request);
        if (!pending) return;
        const operation = getOperationAST(args.document, args.operationName);
        if (operation?.operation !== 'query') pending.query = false;
        pending.operationName = args.operationName ?? operation?.name?.value;
      },
      onResultProcess: ({ request, result, setResult, serverContext }) => {
        const pending = this.pending.get(request);
        if (!pending || pending.warm) return;
        if (Array.isArray(result) || Symbol.asyncIterator in result) return;
        const usage = (serverContext as { scope?: RequestScope }).scope?.cache;
        const { key } = pending;
        const keep = key !== null && pending.query && !result.errors?.length && !!usage?.sources?.length;
        const get = request.method === 'GET';
        if (!keep && !get) return;
        const sources = usage?.sources ?? [];
        const servableUntil = usage?.servableUntil ?? Number.NEGATIVE_INFINITY;
        const stringify = result.stringify ?? JSON.stringify;
        setResult({
          ...result,
          stringify: (value) => {
            const text = stringify(value);
            const etag = validator(text);
            if (get) pending.etag = etag;
            if (keep && key !== null) {
              const answer: WarmAnswer = { text, etag, sources, servableUntil, operationName: pending.operationName };
              this.answers.set(key, answer, { ttl: this.ttl(sources) });
              this.options.observe?.('kept');
            }
            return text;
          },
        });
      },
    };
  }

  /** How long an answer may be kept at most: until its oldest source is past the longest age any family has. */
  private ttl(sources: readonly AnswerSource[]): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const source of sources) oldest = Math.min(oldest, source.storedAt);
    return Math.max(1, oldest + this.options.cache.longestAgeMs - this.now());
  }

  private keyOf(
    request: Request,
    params: { query?: string; variables?: unknown; operationName?: string },
    extensions: Record<string, unknown> | undefined,
  ): string {
    const hmac = createHmac('sha256', this.options.keySecret);
    for (const name of VALUE_HEADERS) hmac.update(`${name}=${request.headers.get(name) ?? ''}\n`);
    const search = new URL(request.url).searchParams;
    for (const name of CREDENTIAL_PARAMETERS) hmac.update(`${name}=${search.get(name) ?? ''}\n`);
    hmac.update(`${nearMissCredentials(request.headers.keys()).join(',')}\n`);
    // The caller's wish for fresh data is judged when serving, not part of what the answer is.
    const { cacheControl: _cacheControl, ...rest } = extensions ?? {};
    // Every parameter: the query or a trusted document's id, its name and variables.
    hmac.update(JSON.stringify({ ...params, extensions: rest }));
    return hmac.digest('base64url');
  }
}

/** A strong validator: the text's SHA-1, quoted. */
function validator(text: string): string {
  return `"${createHash('sha1').update(text).digest('base64url')}"`;
}
