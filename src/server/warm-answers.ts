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
 * Where a stored answer it used is past its age or dropped, the answer is
 * not built again at once: that GitLab read is sent again, for the same
 * caller with its own credentials, through the answer cache (a 304 where
 * GitLab's ETag still matches). If every such read comes back as it was,
 * the answer stands (renewed). If some came back changed, and another
 * scope already built this operation from exactly the answers this
 * caller's reads now hold (same calls, same bodies, same headers), that
 * text is what running the operation would give this caller, and is served
 * (shared): nothing one scope could not read itself reaches it. Otherwise
 * the operation runs.
 *
 * Keys are an HMAC (the fleet's key secret) of the credentials, the header
 * names that change an answer's hints, the Accept header and the
 * operation's parameters; texts built from given reads are keyed by an
 * HMAC of the operation and those reads' versions. Nothing kept names a
 * token. Each text is kept once, by its validator, however many scopes
 * were answered with it. Kept in this process only, bounded in bytes: the
 * stored upstream answers behind them may live in Redis for the fleet.
 *
 * Every GET answer also gets its validator here (its text's digest), which
 * cache-headers.ts sends as the ETag and compares with If-None-Match.
 */
import { createHash, createHmac } from 'node:crypto';
import { type ExecutionResult, getOperationAST } from 'graphql';
import { type Plugin, processRegularResult } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { AnswerSource, RequestScope, SourceCall } from '../request-scope.js';
import type { AnswerCache } from '../upstreams/answer-cache.js';
import { extensionMaxAgeMs } from './cache-headers.js';
import { nearMissCredentials } from './credentials.js';

/** One kept answer: its text is kept apart, by its validator, once for every scope that was answered with it. */
interface WarmAnswer {
  /** The strong validator of the text, quoted: its key among the texts. */
  etag: string;
  sources: readonly AnswerSource[];
  servableUntil: number;
  /** The operation's name, for the metrics of operations. */
  operationName: string | undefined;
}

/** What became of a warm answer: served as kept, renewed or shared (see above), kept after running, or found stale and built again. */
export type WarmOutcome = 'served' | 'renewed' | 'shared' | 'kept' | 'stale';

/** What a request holds while it is served: its key, and the answer served warm or to be kept. */
interface Pending {
  /** Null where nothing is kept (only the GET's validator is wanted). */
  key: string | null;
  /** The operation and what changes its answer besides the credentials: the part of the key another scope shares. */
  operation: string;
  warm?: WarmAnswer;
  /** False once the operation turned out not to be a query. */
  query: boolean;
  operationName?: string;
  /** The validator of what was sent (GET only), for cache-headers.ts. */
  etag?: string;
  /** The answer's bytes, sent as they are in place of the text Yoga's JSON processor was handed (an empty one). */
  body?: Buffer<ArrayBuffer>;
}

/** Headers a credential comes in (credentials.ts); of the others, only Accept changes an answer by its value, and some by their names (hints). */
const CREDENTIAL_HEADERS = ['authorization', 'private-token', 'job-token', 'sudo', 'x-hubzilla-authorization'];
/** Query parameters a GitLab credential may come in (credentials.ts). */
const CREDENTIAL_PARAMETERS = ['private_token', 'access_token', 'sudo', 'job_token'];
/** Bytes an answer's sources are counted as each (a version with its headers, a call), besides its text. */
const SOURCE_BYTES = 512;

export interface WarmAnswersOptions {
  cache: AnswerCache;
  keySecret: string;
  /** Bytes the kept answers may hold (a quarter of CACHE_MAX_BYTES), least recently used out first. */
  maxBytes: number;
  now?: () => number;
  /** Counts what became of each answer (WarmOutcome). */
  observe?: (outcome: WarmOutcome) => void;
  /**
   * Sends a GitLab read again for this request's caller, with its own
   * credentials, through the answer cache: the source it is now, or null.
   * Without it, an answer with a source past its age is built again.
   */
  reread?: (call: SourceCall, request: Request, scope: RequestScope) => Promise<AnswerSource | null>;
  /** Hears of each query answered warm: its name, its request, and how long serving it took. */
  onServed?: (operationName: string | undefined, request: Request, seconds: number) => void;
}

export class WarmAnswers {
  private readonly answers: LRUCache<string, WarmAnswer>;
  /**
   * Texts by validator, as UTF-8: twenty users' identical dashboards are one
   * text. Kept as the bytes that are sent: encoding the text again on every
   * send took 23% of the gateway's busy time in a bench:dashboard profile
   * of warm refreshes.
   */
  private readonly texts: LRUCache<string, Buffer<ArrayBuffer>>;
  /** The validator of the text an operation gave from given reads (shareKeyOf). */
  private readonly shared: LRUCache<string, string>;
  private readonly pending = new WeakMap<Request, Pending>();
  /** Each source's part of a share key, worked out once: a kept answer's sources are checked again on every refresh. */
  private readonly sourceReads = new WeakMap<AnswerSource, string>();
  private readonly now: () => number;

  constructor(private readonly options: WarmAnswersOptions) {
    this.now = options.now ?? Date.now;
    // Half the room for the texts, three eighths for the answers of scopes (their sources), an eighth for shared keys.
    this.texts = new LRUCache<string, Buffer<ArrayBuffer>>({
      maxSize: Math.max(1, Math.floor(options.maxBytes / 2)),
      sizeCalculation: (text) => text.length + 100,
    });
    this.answers = new LRUCache<string, WarmAnswer>({
      maxSize: Math.max(1, Math.floor((options.maxBytes * 3) / 8)),
      sizeCalculation: (answer) => answer.sources.length * SOURCE_BYTES + 200,
      perf: { now: this.now },
      ttlResolution: 0,
    });
    this.shared = new LRUCache<string, string>({
      maxSize: Math.max(1, Math.floor(options.maxBytes / 8)),
      sizeCalculation: () => 200,
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
      onParams: async ({ request, params, setResult, context }) => {
        const get = request.method === 'GET';
        if (!get && request.method !== 'POST') return;
        const started = performance.now();
        const extensions = params.extensions as Record<string, unknown> | undefined;
        // Only where upstream answers are stored; never for a caller asking how its upstream reads were served.
        const keeping = this.options.cache.storing && extensions?.upstreamCache !== true;
        const scope = (context as { scope?: RequestScope }).scope;
        if (!scope?.cache || (!keeping && !get)) return;
        const operation = keeping ? operationText(request, params, extensions) : '';
        const pending: Pending = { key: keeping ? this.keyOf(request, operation) : null, operation, query: true };
        this.pending.set(request, pending);
        const kept = pending.key === null ? undefined : this.answers.get(pending.key);
        if (!kept || pending.key === null) return;
        const callerAge = extensionMaxAgeMs(extensions) ?? scope.cacheMaxAgeMs;
        const current = await this.current(kept, pending, callerAge, request, callerAge === undefined ? scope : { ...scope, cacheMaxAgeMs: callerAge });
        if (current === null) {
          this.options.observe?.('stale');
          return;
        }
        const [answer, outcome] = current;
        const body = this.texts.get(answer.etag);
        // Pushed out for room: built again.
        if (body === undefined) {
          this.options.observe?.('stale');
          return;
        }
        this.options.observe?.(outcome);
        this.options.onServed?.(answer.operationName, request, (performance.now() - started) / 1000);
        pending.warm = answer;
        pending.etag = answer.etag;
        pending.body = body;
        scope.cache.freshForMs = this.options.cache.plainAgeLeft(answer.sources);
        scope.cache.sources = null;
        // Yoga's JSON processor gets an empty text, and onResponse sends the bytes (onResultProcess hands any other the text).
        // Yoga's type of a result with its own serialiser (ExecutionResultWithSerializer) is not exported.
        const warm: ExecutionResult & { stringify: () => string } = { stringify: () => '' };
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
      onResultProcess: ({ request, result, setResult, serverContext, resultProcessor }) => {
        const pending = this.pending.get(request);
        if (!pending) return;
        // Only Yoga's JSON processor is known to write the text as it is: the bytes go in its place (onResponse).
        const asBytes = resultProcessor === processRegularResult;
        if (pending.warm) {
          const bytes = pending.body;
          // Any other processor (an event stream asked for a query) writes the text itself: nothing is sent in its place.
          if (!asBytes && bytes !== undefined) {
            pending.body = undefined;
            setResult({ ...result, stringify: () => bytes.toString('utf8') });
          }
          return;
        }
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
            const bytes = Buffer.from(text, 'utf8');
            const etag = validator(bytes);
            if (get) pending.etag = etag;
            if (asBytes) pending.body = bytes;
            if (keep && key !== null) {
              const answer: WarmAnswer = { etag, sources, servableUntil, operationName: pending.operationName };
              const ttl = this.ttl(sources);
              this.texts.set(etag, bytes);
              this.answers.set(key, answer, { ttl });
              const shareKey = servableUntil === Number.POSITIVE_INFINITY ? this.shareKeyOf(pending.operation, sources) : null;
              if (shareKey !== null) this.shared.set(shareKey, etag, { ttl });
              this.options.observe?.('kept');
            }
            return asBytes ? '' : text;
          },
        });
      },
      onResponse: ({ request, response, setResponse, fetchAPI }) => {
        const pending = this.pending.get(request);
        const body = pending?.body;
        if (pending === undefined || body === undefined) return;
        // Sent once: a later hook (cache-headers.ts's 304) may still replace it.
        pending.body = undefined;
        const headers = new fetchAPI.Headers(response.headers);
        headers.delete('content-length');
        setResponse(new fetchAPI.Response(body, { status: response.status, statusText: response.statusText, headers }));
      },
    };
  }

  /**
   * The answer to serve for `kept`, and how it stands: as it was, when every
   * source would still be served; else, where each source that would not
   * is a GitLab read that can be sent again, renewed when they all come
   * back unchanged, or another scope's text built from exactly what they
   * now hold. Null: the operation must run.
   */
  private async current(
    kept: WarmAnswer,
    pending: Pending,
    callerAge: number | undefined,
    request: Request,
    scope: RequestScope,
  ): Promise<[WarmAnswer, WarmOutcome] | null> {
    // A text pushed out for room is built again: nothing is read again for it.
    if (this.now() >= kept.servableUntil || !this.texts.has(kept.etag)) return null;
    const { cache, reread } = this.options;
    const stale: number[] = [];
    for (let i = 0; i < kept.sources.length; i++) {
      const source = kept.sources[i] as AnswerSource;
      if (cache.serves(source, callerAge)) continue;
      if (!reread || !source.call || source.version === undefined) return null;
      stale.push(i);
    }
    if (stale.length === 0) return [kept, 'served'];
    const again = await Promise.all(
      stale.map((i) => (reread as NonNullable<typeof reread>)((kept.sources[i] as AnswerSource & { call: SourceCall }).call, request, scope)),
    );
    const sources = [...kept.sources];
    let unchanged = true;
    for (let k = 0; k < stale.length; k++) {
      const i = stale[k] as number;
      const now = again[k];
      // Not stored (refused, joined, failed): nothing tells what the operation would read now.
      if (!now || now.version === undefined) return null;
      if (now.version !== sources[i]?.version) unchanged = false;
      sources[i] = now;
    }
    const key = pending.key as string;
    if (unchanged) {
      const renewed: WarmAnswer = { ...kept, sources };
      this.answers.set(key, renewed, { ttl: this.ttl(sources) });
      return [renewed, 'renewed'];
    }
    const shareKey = this.shareKeyOf(pending.operation, sources);
    const etag = shareKey === null ? undefined : this.shared.get(shareKey);
    if (etag === undefined) return null;
    const answer: WarmAnswer = { etag, sources, servableUntil: kept.servableUntil, operationName: kept.operationName };
    this.answers.set(key, answer, { ttl: this.ttl(sources) });
    return [answer, 'shared'];
  }

  /** How long an answer may be kept at most: until its oldest source is past the longest age any family has. */
  private ttl(sources: readonly AnswerSource[]): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const source of sources) oldest = Math.min(oldest, source.storedAt);
    return Math.max(1, oldest + this.options.cache.longestAgeMs - this.now());
  }

  /** The key of a scope's answer: its credentials, and the operation. */
  private keyOf(request: Request, operation: string): string {
    const hmac = createHmac('sha256', this.options.keySecret);
    for (const name of CREDENTIAL_HEADERS) hmac.update(`${name}=${request.headers.get(name) ?? ''}\n`);
    const search = new URL(request.url).searchParams;
    for (const name of CREDENTIAL_PARAMETERS) hmac.update(`${name}=${search.get(name) ?? ''}\n`);
    hmac.update(operation);
    return hmac.digest('base64url');
  }

  /**
   * The key of a text built by `operation` from `sources`, for any scope:
   * null unless every source is a read a caller can send again (GitLab's),
   * whose version is known. The reads in a canonical order: which read
   * first does not change the answer.
   */
  private shareKeyOf(operation: string, sources: readonly AnswerSource[]): string | null {
    const reads: string[] = [];
    for (const source of sources) {
      if (!source.call || source.version === undefined) return null;
      let read = this.sourceReads.get(source);
      if (read === undefined) {
        read = `${JSON.stringify(source.call)}\n${source.version}`;
        this.sourceReads.set(source, read);
      }
      reads.push(read);
    }
    const hmac = createHmac('sha256', this.options.keySecret).update(`shared\n${operation}`);
    for (const read of reads.sort()) hmac.update(`\n\n${read}`);
    return hmac.digest('base64url');
  }
}

/**
 * What changes an operation's answer besides the credentials: the Accept
 * header, the names of headers that look like credentials but are not read
 * as any (the answer's hints), and every parameter: the query or a trusted
 * document's id, its name, variables and extensions. The caller's wish for
 * fresh data is judged when serving, not part of what the answer is.
 */
function operationText(
  request: Request,
  params: { query?: string; variables?: unknown; operationName?: string },
  extensions: Record<string, unknown> | undefined,
): string {
  const { cacheControl: _cacheControl, ...rest } = extensions ?? {};
  const { variables, ...named } = params;
  // No variables and empty ones are the same operation.
  const given = variables !== null && typeof variables === 'object' && Object.keys(variables).length === 0 ? undefined : variables;
  return `accept=${request.headers.get('accept') ?? ''}\n${nearMissCredentials(request.headers.keys()).join(',')}\n${JSON.stringify({ ...named, variables: given, extensions: rest })}`;
}

/** A strong validator: the text's SHA-1, quoted. */
function validator(text: Buffer): string {
  return `"${createHash('sha1').update(text).digest('base64url')}"`;
}
