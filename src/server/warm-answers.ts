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
 * (shared): nothing one scope could not read itself reaches it. Otherwise,
 * where every read that changed was a claiming field's own (schema/
 * claims.ts: a project's jobs), only those fields are resolved again, for
 * this caller, on the values they were resolved on, and their new values
 * put in place in the kept answer (patched): one project's jobs after a
 * webhook about it, not the whole dashboard. Otherwise the operation runs.
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
 *
 * warm-replays.ts sits in front of Yoga: a request the same as one answered
 * from a kept text is judged here (standingFor) and sent that answer again
 * whole; what it finds and cannot send is handed to the request's run
 * through Yoga (handOver), which takes it up instead of reading again.
 */
import { createHash, createHmac } from 'node:crypto';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  GraphQLSchema,
  getOperationAST,
  Kind,
  OperationTypeNode,
} from 'graphql';
import { type Plugin, processRegularResult } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { AnswerSource, Claim, RequestScope, SourceCall } from '../request-scope.js';
import type { AnswerCache } from '../upstreams/answer-cache.js';
import { extensionMaxAgeMs } from './cache-headers.js';
import { nearMissCredentials } from './credentials.js';

/** One kept answer: its text is kept apart, by its validator, once for every scope that was answered with it. */
export interface WarmAnswer {
  /** The strong validator of the text, quoted: its key among the texts. */
  etag: string;
  sources: readonly AnswerSource[];
  servableUntil: number;
  /** The operation's name, for the metrics of operations. */
  operationName: string | undefined;
  /** The fields that read some of `sources` themselves (the same objects): what a patch resolves again. */
  claims: readonly Claim[];
}

/** A kept text: the bytes sent, and (where some field of it may be resolved again) the answer's data they were written from. */
interface Text {
  bytes: Buffer<ArrayBuffer>;
  data?: unknown;
}

/** An answer brought up to date by resolving some of its fields again: what it was, what its sources are now, and which fields. */
interface Patch {
  kept: WarmAnswer;
  /** Its sources as read again now, in the order of `kept.sources`. */
  sources: readonly AnswerSource[];
  /** The fields to resolve again, none inside another. */
  run: readonly Claim[];
  data: unknown;
}

/** What became of a warm answer: served as kept, renewed, shared or patched (see above), kept after running, or found stale and built again. */
export type WarmOutcome = 'served' | 'renewed' | 'shared' | 'patched' | 'kept' | 'stale';

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
  /** The age the caller accepts (its Cache-Control, or the operation's own), judged when serving. */
  callerAge?: number;
  /** The validator of the text sent as bytes, served or kept: what a replay (warm-replays.ts) of this request sends again. */
  sent?: string;
  /** The kept answer this request brings up to date by resolving some of its fields again. */
  patch?: Patch;
}

/** What serving a kept answer needs of its request: where its credentials are (a reread sends them), and when its caller is gone. */
export interface CallerRequest {
  readonly headers: { get(name: string): string | null };
  /** Absolute: only its query parameters are read (credentials may come in some). */
  readonly url: string;
  readonly signal?: AbortSignal;
}

/** A kept answer as it stands for a caller: served as kept, renewed or shared (with its bytes), a patch to run, or null (the operation runs). */
export type Standing = { answer: WarmAnswer; outcome: WarmOutcome; body: Buffer<ArrayBuffer> } | Patch | null;

/** Headers a credential comes in (credentials.ts); of the others, only Accept changes an answer by its value, and some by their names (hints). */
const CREDENTIAL_HEADERS = ['authorization', 'private-token', 'job-token', 'sudo', 'x-hubzilla-authorization'];
/** Query parameters a GitLab credential may come in (credentials.ts). */
const CREDENTIAL_PARAMETERS = ['private_token', 'access_token', 'sudo', 'job_token'];
/** Bytes an answer's sources are counted as each (a version with its headers, a call), besides its text. */
const SOURCE_BYTES = 512;
/** Bytes a claiming field of an answer is counted as (its path, and a reference to its info and parent, which live anyway). */
const CLAIM_BYTES = 128;
/** An answer's data kept beside its text is counted as this many times the text's length (objects weigh more than their JSON). */
const DATA_WEIGHT = 3;

export interface WarmAnswersOptions {
  cache: AnswerCache;
  keySecret: string;
  /** Bytes the kept answers may hold (three sixteenths of CACHE_MAX_BYTES; replays have the rest of a quarter), least recently used out first. */
  maxBytes: number;
  now?: () => number;
  /** Counts what became of each answer (WarmOutcome). */
  observe?: (outcome: WarmOutcome) => void;
  /**
   * Sends a GitLab read again for this request's caller, with its own
   * credentials, through the answer cache: the source it is now, or null.
   * Without it, an answer with a source past its age is built again.
   */
  reread?: (call: SourceCall, caller: CallerRequest, scope: RequestScope) => Promise<AnswerSource | null>;
  /** Hears of each query answered warm: its name, its request, and how long serving it took. */
  onServed?: (operationName: string | undefined, caller: CallerRequest, seconds: number) => void;
}

export class WarmAnswers {
  private readonly answers: LRUCache<string, WarmAnswer>;
  /**
   * Texts by validator, as UTF-8: twenty users' identical dashboards are one
   * text. Kept as the bytes that are sent: encoding the text again on every
   * send took 23% of the gateway's busy time in a bench:dashboard profile
   * of warm refreshes.
   */
  private readonly texts: LRUCache<string, Text>;
  /** The validator of the text an operation gave from given reads (shareKeyOf). */
  private readonly shared: LRUCache<string, string>;
  private readonly pending = new WeakMap<Request, Pending>();
  /**
   * Each kept answer found served, with the cache's count of changes then,
   * until when each of its sources is served and so until when it holds: a
   * refresh of the same answer in the meantime is not checked source by
   * source again (a dashboard has a hundred), and one after is checked
   * only for the sources whose time ran out, while the count stands.
   */
  private readonly checked = new WeakMap<WarmAnswer, { generation: number; callerAge: number | undefined; until: number; each: Float64Array }>();
  /** What a replay found for a request it could not answer (handOver). */
  private readonly handovers = new WeakMap<RequestScope, { key: string; standing: Standing }>();
  /** Each source's part of a share key, worked out once: a kept answer's sources are checked again on every refresh. */
  private readonly sourceReads = new WeakMap<AnswerSource, string>();
  private readonly now: () => number;

  constructor(private readonly options: WarmAnswersOptions) {
    this.now = options.now ?? Date.now;
    // Half the room for the texts, three eighths for the answers of scopes (their sources), an eighth for shared keys.
    this.texts = new LRUCache<string, Text>({
      maxSize: Math.max(1, Math.floor(options.maxBytes / 2)),
      sizeCalculation: (text) => text.bytes.length * (text.data === undefined ? 1 : 1 + DATA_WEIGHT) + 100,
    });
    this.answers = new LRUCache<string, WarmAnswer>({
      maxSize: Math.max(1, Math.floor((options.maxBytes * 3) / 8)),
      sizeCalculation: (answer) => answer.sources.length * SOURCE_BYTES + answer.claims.length * CLAIM_BYTES + 200,
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

  /** Whether answers are kept at all: only where upstream answers are stored. */
  get keeping(): boolean {
    return this.options.cache.storing;
  }

  /** How long a browser may keep `answer`: the least plain age its reads have left, in ms. */
  freshForMs(answer: WarmAnswer): number {
    return this.options.cache.plainAgeLeft(answer.sources);
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
        const callerAge = extensionMaxAgeMs(extensions) ?? scope.cacheMaxAgeMs;
        const pending: Pending = { key: keeping ? this.keyOf(request, operation) : null, operation, query: true, callerAge };
        this.pending.set(request, pending);
        // Fields that read for themselves note it (schema/claims.ts) only where the answer may be kept.
        if (keeping && scope.cache.sources) scope.cache.claims = [];
        if (pending.key === null) return;
        // A replay that could not send its answer as it was hands over what it found: nothing is read again for it.
        const handed = this.handovers.get(scope);
        this.handovers.delete(scope);
        const standing = handed?.key === pending.key ? handed.standing : await this.standingFor(pending.key, operation, callerAge, request, scope);
        if (standing === undefined) return;
        if (standing === null || 'run' in standing) {
          // A patch is counted once it is kept (patched), or else as stale.
          if (standing === null) this.options.observe?.('stale');
          else pending.patch = standing;
          return;
        }
        const { answer, outcome, body } = standing;
        this.served(answer, outcome, request, started);
        pending.warm = answer;
        pending.etag = answer.etag;
        pending.body = body;
        pending.sent = answer.etag;
        // Read only by a GET's Cache-Control (a POST's is no-store): a dashboard's hundred sources are not gone over for a POST.
        if (get) scope.cache.freshForMs = this.freshForMs(answer);
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
        if (operation?.operation !== 'query') {
          pending.query = false;
          clearClaims(args.contextValue);
        }
        pending.operationName = args.operationName ?? operation?.name?.value;
      },
      // A subscription is never kept: its fields note nothing, however long it lives.
      onSubscribe: ({ args }) => clearClaims(args.contextValue),
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
            pending.sent = undefined;
            setResult({ ...result, stringify: () => bytes.toString('utf8') });
          }
          return;
        }
        if (Array.isArray(result) || Symbol.asyncIterator in result) return;
        const usage = (serverContext as { scope?: RequestScope }).scope?.cache;
        const { key } = pending;
        const keep = key !== null && pending.query && !result.errors?.length && !!usage?.sources?.length;
        const get = request.method === 'GET';
        if (!keep && !get) {
          if (pending.patch) this.options.observe?.('stale');
          return;
        }
        const sources = usage?.sources ?? [];
        const claims = usage?.claims ?? [];
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
              if (asBytes) pending.sent = etag;
              const answer: WarmAnswer = { etag, sources, servableUntil, operationName: pending.operationName, claims };
              const ttl = this.ttl(sources);
              // The data only where some field of it may be resolved again.
              this.texts.set(etag, claims.length > 0 ? { bytes, data: result.data } : { bytes });
              this.answers.set(key, answer, { ttl });
              const shareKey = servableUntil === Number.POSITIVE_INFINITY ? this.shareKeyOf(pending.operation, sources) : null;
              if (shareKey !== null) this.shared.set(shareKey, etag, { ttl });
              this.options.observe?.(pending.patch ? 'patched' : 'kept');
            } else if (pending.patch) {
              this.options.observe?.('stale');
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
   * Resolves a patched request (Pending.patch) in place of running its
   * operation: goes after the compiled executor, so that its executor is
   * the one used. Anything a patch cannot do runs the operation whole.
   */
  patchPlugin(): Plugin {
    return {
      onExecute: ({ args, executeFn, setExecuteFn }) => {
        const request = (args.contextValue as { request?: Request }).request;
        const pending = request && this.pending.get(request);
        const patch = pending?.patch;
        if (!pending || !patch) return;
        const whole = executeFn as (args: ExecutionArgs) => ReturnType<typeof execute>;
        setExecuteFn(async (given: ExecutionArgs) => {
          const patched = await this.patched(given, patch);
          if (patched) return patched;
          // Found, but not brought up to date: it runs whole, and what it gives is kept as any other run's.
          pending.patch = undefined;
          this.options.observe?.('stale');
          return await whole(given);
        });
      },
    };
  }

  /**
   * The kept answer with the fields of `patch` resolved again for this
   * request's caller; its reads and claims noted as a run of the whole
   * operation would have. Null where a field failed or its place is gone:
   * the operation then runs whole, from no reads.
   */
  private async patched(args: ExecutionArgs, patch: Patch): Promise<ExecutionResult | null> {
    const usage = (args.contextValue as { scope?: RequestScope }).scope?.cache;
    if (!usage?.sources || !usage.claims) return null;
    let data = patch.data;
    try {
      for (const claim of patch.run) {
        const info = claim.field as GraphQLResolveInfo;
        const before = usage.claims.length;
        const result = await execute({
          schema: rootedAt(info.schema, info.parentType),
          document: fieldDocument(info),
          rootValue: claim.parent,
          contextValue: args.contextValue,
          variableValues: args.variableValues,
        });
        const key = claim.path[claim.path.length - 1] as string;
        if (result.errors?.length || !result.data || !usage.sources || !usage.claims) throw new Error('not patched');
        data = spliced(data, claim.path, 0, result.data[key]);
        // The fields it claimed were resolved on the claim's parent: their places are under the claim's own.
        const at = claim.path.slice(0, -1);
        for (let i = before; i < usage.claims.length; i++) {
          const inner = usage.claims[i] as Claim;
          usage.claims[i] = { ...inner, path: [...at, ...inner.path] };
        }
      }
    } catch {
      usage.sources = [];
      usage.claims = [];
      return null;
    }
    // What the kept answer read outside the fields resolved again, as read now; then what they read.
    const now = readNow(patch.kept.sources, patch.sources);
    const within = (claim: Claim) => patch.run.some((run) => startsWith(claim.path, run.path));
    const replaced = new Set<AnswerSource>();
    for (const claim of patch.kept.claims) if (within(claim)) for (const source of claim.sources) replaced.add(source);
    const sources = patch.kept.sources.filter((source) => !replaced.has(source)).map((source) => now.get(source) as AnswerSource);
    usage.sources = [...sources, ...usage.sources];
    usage.claims = [
      ...remapped(
        patch.kept.claims.filter((claim) => !within(claim)),
        now,
      ),
      ...usage.claims,
    ];
    usage.servableUntil = Math.min(usage.servableUntil, patch.kept.servableUntil);
    // A browser may keep the answer no longer than the oldest of all it was built from, not only what was read now.
    const left = this.options.cache.plainAgeLeft(sources);
    usage.freshForMs = usage.freshForMs === null ? left : Math.min(usage.freshForMs, left);
    return { data: data as Record<string, unknown> };
  }

  /**
   * The answer to serve for `kept`, and how it stands: as it was, when every
   * source would still be served; else, where each source that would not
   * is a GitLab read that can be sent again, renewed when they all come
   * back unchanged, or another scope's text built from exactly what they
   * now hold; else, where every read that changed is a claiming field's
   * own, the patch that brings it up to date. Null: the operation must run.
   */
  private async current(
    kept: WarmAnswer,
    key: string,
    operation: string,
    callerAge: number | undefined,
    caller: CallerRequest,
    scope: RequestScope,
  ): Promise<Standing> {
    const at = this.now();
    // A text pushed out for room is built again: nothing is read again for it.
    if (at >= kept.servableUntil || !this.texts.has(kept.etag)) return null;
    const { cache, reread } = this.options;
    // Taken before anything is read again: a drop or mark while the reads are out makes the judgement below a stale one.
    const generation = cache.generation;
    const found = this.checked.get(kept);
    const checked = found && found.generation === generation && found.callerAge === callerAge ? found : undefined;
    if (checked && at < checked.until) return this.withText(kept, 'served');
    const stale: number[] = [];
    const each = new Float64Array(kept.sources.length);
    let until = Number.POSITIVE_INFINITY;
    for (let i = 0; i < kept.sources.length; i++) {
      const source = kept.sources[i] as AnswerSource;
      // A time found while the count stands still holds; one run out is judged again (a webhook window that ended leaves the plain age).
      const known = checked?.each[i] ?? Number.NEGATIVE_INFINITY;
      const servedUntil = known > at ? known : cache.servedUntil(source, callerAge);
      each[i] = servedUntil;
      if (servedUntil > at) {
        until = Math.min(until, servedUntil);
        continue;
      }
      if (!reread || !source.call || source.version === undefined) return null;
      stale.push(i);
    }
    if (stale.length === 0) {
      this.checked.set(kept, { generation, callerAge, until, each });
      return this.withText(kept, 'served');
    }
    const again = await Promise.all(
      stale.map((i) => (reread as NonNullable<typeof reread>)((kept.sources[i] as AnswerSource & { call: SourceCall }).call, caller, scope)),
    );
    const sources = [...kept.sources];
    const changed = new Set<AnswerSource>();
    for (let k = 0; k < stale.length; k++) {
      const i = stale[k] as number;
      const now = again[k];
      // Not stored (refused, joined, failed): nothing tells what the operation would read now.
      if (!now || now.version === undefined) return null;
      if (now.version !== sources[i]?.version) changed.add(kept.sources[i] as AnswerSource);
      sources[i] = now;
      // What was read again is served until its own time: with the rest, the renewed or shared answer needs no check of its own next time.
      each[i] = cache.servedUntil(now, callerAge);
      until = Math.min(until, each[i] as number);
    }
    // Most answers have no claims: no map of their sources is made for them.
    const claims = kept.claims.length === 0 ? kept.claims : remapped(kept.claims, readNow(kept.sources, sources));
    if (changed.size === 0) {
      const renewed: WarmAnswer = { ...kept, sources, claims };
      this.answers.set(key, renewed, { ttl: this.ttl(sources) });
      this.checked.set(renewed, { generation, callerAge, until, each });
      return this.withText(renewed, 'renewed');
    }
    const shareKey = this.shareKeyOf(operation, sources);
    const etag = shareKey === null ? undefined : this.shared.get(shareKey);
    // The same reads give the same text, with its fields in the same places: this scope's claims hold for it.
    if (etag !== undefined) {
      const answer: WarmAnswer = { etag, sources, servableUntil: kept.servableUntil, operationName: kept.operationName, claims };
      this.answers.set(key, answer, { ttl: this.ttl(sources) });
      this.checked.set(answer, { generation, callerAge, until, each });
      return this.withText(answer, 'shared');
    }
    return this.patchOf(kept, sources, changed);
  }

  /** `answer` with its text, to serve; null where the text was pushed out for room (the operation runs). */
  private withText(answer: WarmAnswer, outcome: WarmOutcome): Standing {
    const body = this.texts.get(answer.etag)?.bytes;
    return body === undefined ? null : { answer, outcome, body };
  }

  /**
   * The answer kept under `key` as it stands for `caller` now (current()),
   * reading again for it what has aged out; undefined where none is kept.
   * `callerAge`: the age the caller accepts, where it asked for one.
   */
  async standingFor(key: string, operation: string, callerAge: number | undefined, caller: CallerRequest, scope: RequestScope): Promise<Standing | undefined> {
    const kept = this.answers.get(key);
    if (kept === undefined) return undefined;
    return await this.current(kept, key, operation, callerAge, caller, callerAge === undefined ? scope : { ...scope, cacheMaxAgeMs: callerAge });
  }

  /** What standingFor found for a request that then goes through Yoga: its onParams takes it up instead of reading again. */
  handOver(scope: RequestScope, key: string, standing: Standing): void {
    this.handovers.set(scope, { key, standing });
  }

  /** Counts an answer served warm: what became of it, and the operation's own metrics. */
  served(answer: WarmAnswer, outcome: WarmOutcome, caller: CallerRequest, started: number): void {
    this.options.observe?.(outcome);
    this.options.onServed?.(answer.operationName, caller, (performance.now() - started) / 1000);
  }

  /** What a replay of `request` needs (warm-replays.ts), where its answer was a kept text sent as bytes: else null. */
  replayable(request: Request): { key: string; operation: string; etag: string; callerAge: number | undefined } | null {
    const pending = this.pending.get(request);
    if (pending?.key == null || pending.sent === undefined || !pending.query) return null;
    return { key: pending.key, operation: pending.operation, etag: pending.sent, callerAge: pending.callerAge };
  }

  /** The patch that brings `kept` up to date, where every read that changed is some claiming field's own and its data is kept; else null. */
  private patchOf(kept: WarmAnswer, sources: readonly AnswerSource[], changed: ReadonlySet<AnswerSource>): Patch | null {
    const data = this.texts.get(kept.etag)?.data;
    if (data === undefined) return null;
    const touched = kept.claims.filter((claim) => claim.sources.some((source) => changed.has(source)));
    for (const source of changed) if (!touched.some((claim) => claim.sources.includes(source))) return null;
    // A field inside another resolved again is resolved with it.
    const run = touched.filter(
      (claim) => !touched.some((outer) => outer !== claim && outer.path.length < claim.path.length && startsWith(claim.path, outer.path)),
    );
    return { kept, sources, run, data };
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

function clearClaims(context: unknown): void {
  const usage = (context as { scope?: RequestScope }).scope?.cache;
  if (usage) usage.claims = undefined;
}

/** Each kept source to the one that stands for it now (read again, or itself): `now` is in the order of `kept`. */
function readNow(kept: readonly AnswerSource[], now: readonly AnswerSource[]): Map<AnswerSource, AnswerSource> {
  const map = new Map<AnswerSource, AnswerSource>();
  for (let i = 0; i < kept.length; i++) map.set(kept[i] as AnswerSource, now[i] as AnswerSource);
  return map;
}

/** Claims with their sources as read now (`now`: each kept source to the one read again, or itself). */
function remapped(claims: readonly Claim[], now: ReadonlyMap<AnswerSource, AnswerSource>): Claim[] {
  return claims.map((claim) => ({ ...claim, sources: claim.sources.map((source) => now.get(source) ?? source) }));
}

function startsWith(path: readonly (string | number)[], prefix: readonly (string | number)[]): boolean {
  return prefix.length <= path.length && prefix.every((key, i) => path[i] === key);
}

/** `node` with the value at `path` (from `from` on) replaced, copied along the path only: kept data is shared. */
function spliced(node: unknown, path: readonly (string | number)[], from: number, value: unknown): unknown {
  if (from === path.length) return value;
  const key = path[from] as string | number;
  if (Array.isArray(node) && typeof key === 'number' && key < node.length) {
    const copy = [...node];
    copy[key] = spliced(node[key], path, from + 1, value);
    return copy;
  }
  if (node !== null && typeof node === 'object' && typeof key === 'string' && Object.hasOwn(node, key)) {
    return { ...node, [key]: spliced((node as Record<string, unknown>)[key], path, from + 1, value) };
  }
  throw new Error('gone');
}

/** The schema with a field's parent type as its root, to resolve that field alone on the value it was resolved on. */
const rootedSchemas = new WeakMap<GraphQLObjectType, GraphQLSchema>();
function rootedAt(schema: GraphQLSchema, type: GraphQLObjectType): GraphQLSchema {
  let rooted = rootedSchemas.get(type);
  if (rooted === undefined) {
    rooted = new GraphQLSchema({ query: type, types: Object.values(schema.getTypeMap()), directives: schema.getDirectives(), assumeValid: true });
    rootedSchemas.set(type, rooted);
  }
  return rooted;
}

/** A document of the field alone (every node of it, with the fragments and variables of its operation), as the root of a query. */
const fieldDocuments = new WeakMap<readonly unknown[], DocumentNode>();
function fieldDocument(info: GraphQLResolveInfo): DocumentNode {
  let document = fieldDocuments.get(info.fieldNodes);
  if (document === undefined) {
    document = {
      kind: Kind.DOCUMENT,
      definitions: [
        {
          kind: Kind.OPERATION_DEFINITION,
          operation: OperationTypeNode.QUERY,
          variableDefinitions: info.operation.variableDefinitions,
          selectionSet: { kind: Kind.SELECTION_SET, selections: info.fieldNodes },
        },
        ...Object.values(info.fragments),
      ],
    };
    fieldDocuments.set(info.fieldNodes, document);
  }
  return document;
}

/** A strong validator: the text's SHA-1, quoted. */
function validator(text: Buffer): string {
  return `"${createHash('sha1').update(text).digest('base64url')}"`;
}
