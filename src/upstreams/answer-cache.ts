/**
 * The upstream answer cache: GET answers kept per credential scope, never
 * older than asked, dropped by the changes that touch them, and reads in
 * flight shared. HttpClient composes it (http.ts): it hands over a call and
 * a way to send it, and gets back the answer, stored, shared or fresh.
 *
 * - Keys are an HMAC (the fleet's CACHE_KEY_SECRET) of the credential
 *   headers, the upstream and the URL: no key, in memory or in a Redis dump,
 *   names a token, and two scopes never share an entry or a call.
 * - An entry's age counts from when its read began. It serves a caller while
 *   younger than its family's maximum age (cache-policy.ts), the caller's own
 *   (Cache-Control), and every drop of one of its tags since it was read.
 * - Drops (a webhook, a mutation) apply here at once and reach every other
 *   instance through the shared channel; a read in flight that began before a
 *   drop is neither joined nor stored.
 * - Job and pipeline answers live the webhook age only for a project whose
 *   webhooks reach the gateway: one that delivered a job or pipeline event
 *   within the quiet window (registering the receiver is not enough: GitLab
 *   may not be able to reach it), and only when read after this instance
 *   began listening for drops.
 * - Where the upstream sent an ETag, a stale entry is revalidated with
 *   If-None-Match; a 304 renews it without a body.
 */
import { createHmac } from 'node:crypto';
import type { AnswerSource, CacheUsage, Claim, RequestScope, SourceCall } from '../request-scope.js';
import { bodyDigest, type CacheEntry, type CacheStore, type ParsedBody } from './cache-store.js';
import { type CachePolicy, gitlabPolicy, hubzillaPolicy, projectAliases, type WebhookKind, webhookTags } from './cache-policy.js';
import type { PathSegments } from './http.js';
import type { CallSignal } from './resilience.js';
import { SharedReads } from './shared-reads.js';

/** A whole answer as the client reads it before judging its status. */
export interface RawAnswer {
  status: number;
  headers: Readonly<Record<string, string | undefined>>;
  text: string;
  /** Body bytes read from the upstream (0 when served without a body). */
  bytes: number;
  /** How this caller was served. */
  servedBy?: 'hit' | 'revalidated' | 'joined' | 'upstream';
  /** The stored answer it is, when it was stored (hit, revalidated, or read and kept). */
  source?: AnswerSource;
  /** The stored body's parsed form, shared with its other readers (in-memory store). */
  parsed?: ParsedBody;
}

/** One GET as the cache sees it. */
export interface CacheCall {
  upstream: string;
  path: PathSegments;
  /** Path and query exactly as sent. */
  url: string;
  /** The credential headers forwarded: the scope of the call. */
  credentials: Readonly<Record<string, string>> | undefined;
  /** Who the upstream verified the credentials as (a Hubzilla channel), when known: the scope instead of the headers. */
  identity?: string;
  /** The request served; none for background work (pollers, log watches), which always reads fresh but may share. */
  scope: RequestScope | undefined;
  /** The field whose resolver sends it, noted with what it read. */
  claim?: Claim;
  /** How to send it again for the same credentials, kept with its source (warm answers read a source again instead of running the operation). */
  again?: SourceCall;
  signal: AbortSignal | undefined;
}

/** Sends the call for real, with the extra headers (If-None-Match) on the shared signal; `onJoin` hears of each caller that joins it. */
export type SendCall = (extraHeaders: Record<string, string>, signal: CallSignal, onJoin: (listener: (joiner: unknown) => void) => void) => Promise<RawAnswer>;

/** What the cache tells metrics and traces: never a key, a path or a credential. */
export interface CacheObserver {
  /** One GET served; `ageMs` is the age of the stored answer a hit served. */
  lookup?(upstream: string, family: string, outcome: 'hit' | 'miss' | 'revalidated' | 'joined', ageMs?: number): void;
  invalidation?(upstream: string, cause: 'webhook' | 'mutation'): void;
}

/** The pub/sub the drops travel on to every instance (the event bus's shared channel). */
export interface CacheChannel {
  publish(topic: string, payload: unknown): void;
  listen<T>(topic: string, listener: (payload: T) => void): () => void;
}

export interface AnswerCacheOptions {
  store: CacheStore;
  /** Keys the digest of keys; the same on every instance that shares the store. */
  keySecret: string;
  /** CACHE_MAX_AGE_MS: the plain maximum age of every family. */
  maxAgeMs: number;
  /** CACHE_WEBHOOK_MAX_AGE_MS: job and pipeline answers of a webhook-fed project. */
  webhookMaxAgeMs: number;
  /** How long after a project's last webhook it still counts as webhook-fed (the subscription hub's quiet window). */
  webhookQuietMs: number;
  observer?: CacheObserver;
  /** Drops remembered at most (MAX_DROPS by default); past it, what cannot be remembered counts as dropped. */
  maxDrops?: number;
  /** The clock entries are aged by (ms since the epoch); tests move it. Default Date.now. */
  now?: () => number;
}

/** A drop, as it travels between instances. */
interface CacheMessage {
  /** The instance that sent it: it applied the message already. */
  from: string;
  at: number;
  drop?: string[];
  /** What the drop is for, counted by every instance that applies it. */
  upstream?: string;
  cause?: 'webhook' | 'mutation';
  /** A project whose webhooks now reach the gateway (one of its events arrived): until `until` (ms since the epoch). */
  fed?: { projectId: number; kinds: WebhookKind[]; until: number };
  /** A project whose webhooks may no longer reach the gateway. */
  unfed?: number;
  /** Drops may have been lost for good: everything read before `at` counts as dropped, in every instance. */
  floor?: true;
}

/** The shared-channel topic drops travel on. */
export const CACHE_TOPIC = 'duograph:cache';
/** Headers a caller reads from a stored answer; nothing else (cookies above all) is kept. */
const KEPT_HEADERS = ['content-type', 'etag', 'link', 'x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page'];
/** How many maximum ages an entry with an ETag is kept for revalidation. */
const REVALIDATE_FOR = 4;
/**
 * Drops remembered at most (a tag and two numbers each: about 5 MB at the
 * bound). One older than the longest age an entry may serve cannot matter
 * and is forgotten; a younger one forgotten for room raises the floor:
 * everything read before it counts as dropped.
 */
const MAX_DROPS = 50_000;
/** Projects remembered as webhook-fed at most (the least recently fed forgotten first, and then read with the plain age). */
const MAX_FED = 10_000;
/** How far the clocks of two instances may disagree, for drops one sends the other. */
const CLOCK_SKEW_MS = 1_000;

export class AnswerCache {
  readonly store: CacheStore;
  private readonly reads: SharedReads<RawAnswer>;
  /** Reads in flight while nothing is stored (readDecoded): their bodies decoded as they arrive. */
  private readonly decodedReads: SharedReads<unknown>;
  /** When each tag was last dropped: by the clock of the instance that dropped it, and by this instance's steps. */
  private readonly drops = new Map<string, { at: number; seq: number }>();
  /** The newest drop forgotten while it could still matter: anything read before it counts as dropped. */
  private floor = { at: Number.NEGATIVE_INFINITY, seq: 0 };
  /** This instance's steps: every read started and every drop applied takes the next, so their order is exact. */
  private seq = 0;
  /** Counts each change besides the clock to what the freshness of stored answers rests on: drops, webhook marks, the floor, a gap. */
  private changes = 0;
  /** Projects whose webhooks reach the gateway, by kind: until when. */
  private readonly fed = new Map<number, Partial<Record<WebhookKind, number>>>();
  /** Entries read before this instance listened may have missed drops: they get the plain age only (never, until it listens). */
  private since = Number.POSITIVE_INFINITY;
  private readonly id = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  private channel: CacheChannel | null = null;
  private stopListening: () => void = () => {};

  constructor(private readonly options: AnswerCacheOptions) {
    this.store = options.store;
    this.reads = new SharedReads<RawAnswer>(() => ++this.seq);
    this.decodedReads = new SharedReads<unknown>(() => ++this.seq);
  }

  /**
   * Starts taking drops from the other instances on `channel` and sending
   * them this instance's: once the channel can carry them (Redis reached).
   */
  listen(channel: CacheChannel): void {
    this.stopListening();
    this.channel = channel;
    this.since = this.now();
    this.changes++;
    this.stopListening = channel.listen<CacheMessage>(CACHE_TOPIC, (message) => {
      if (message.from !== this.id) this.apply(message);
    });
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  /** Reads in flight now. */
  get inFlight(): number {
    return this.reads.size + this.decodedReads.size;
  }

  /** Whether answers are stored at all (CACHE_MAX_AGE_MS > 0); reads in flight are shared either way. */
  get storing(): boolean {
    return this.options.maxAgeMs > 0;
  }

  /**
   * Serves a GET: from a stored answer young enough for this caller, else by
   * joining the same read in flight, else by `send` (with If-None-Match when
   * a stale entry has an ETag), storing what may be stored.
   */
  async read(call: CacheCall, send: SendCall, cancelled: () => Error, onHit?: (answer: RawAnswer) => void): Promise<RawAnswer> {
    const policy = call.upstream === 'gitlab' ? gitlabPolicy(call.path) : hubzillaPolicy(call.path);
    // The digest only for what is stored; reads in flight are matched in memory, by the plain scope and URL.
    const scopeText = this.scopeText(call);
    const key = policy && this.storing ? this.digest(scopeText) : null;
    const usage = call.scope?.cache;
    // Background work reads fresh: pollers exist to see changes; what they read still serves others.
    const callerAge = call.scope ? call.scope.cacheMaxAgeMs : 0;
    const entry = key !== null ? await this.store.get(key) : null;
    if (entry && policy && this.fresh(entry, policy.webhook, callerAge)) {
      const answer = served(entry, 'hit', policy, call.again);
      this.count(call.upstream, policy, 'hit', usage, entry);
      track(call, answer);
      onHit?.(answer);
      return answer;
    }
    const { promise, joined } = this.reads.run(scopeText, {
      signal: call.signal,
      joinable: (started) => !policy || !this.droppedAfter(policy.tags, started),
      joiner: call.scope,
      cancelled,
      start: ({ signal, onJoin }) => this.fetch(call, key, policy, entry, (headers) => send(headers, signal, onJoin)),
    });
    // Counted at once, so that the join is seen while the shared read is still out.
    if (joined) this.count(call.upstream, policy, 'joined', usage, null);
    const answer = await promise;
    // A joined read is judged by its own starter's steps, not this caller's: an answer built on it is not kept.
    if (joined) {
      if (usage) usage.sources = null;
      return { ...answer, servedBy: 'joined' };
    }
    const revalidated = answer.servedBy === 'revalidated';
    this.count(call.upstream, policy, revalidated ? 'revalidated' : 'miss', usage, revalidated ? { storedAt: this.now() } : null);
    track(call, answer);
    return answer;
  }

  /**
   * A GET while nothing is stored (CACHE_MAX_AGE_MS=0): joins the same
   * read in flight by a caller of the same scope that decodes its body
   * alike (`decodeKey`), else sends it with `send`, which decodes the body
   * as it arrives. Only the decoded value is handed on: a body's text
   * handed up through the read's promises (made when it started, old by
   * the time it answers) would stay reachable until the next full
   * collection, copied by every young one.
   */
  async readDecoded<T>(
    call: CacheCall,
    decodeKey: string,
    send: (read: { signal: CallSignal; onJoin: (listener: (joiner: unknown) => void) => void }) => Promise<T>,
    cancelled: () => Error,
  ): Promise<T> {
    const policy = call.upstream === 'gitlab' ? gitlabPolicy(call.path) : hubzillaPolicy(call.path);
    const usage = call.scope?.cache;
    const { promise, joined } = this.decodedReads.run(`${this.scopeText(call)}\n${decodeKey}`, {
      signal: call.signal,
      joinable: (started) => !policy || !this.droppedAfter(policy.tags, started),
      joiner: call.scope,
      cancelled,
      start: send,
    });
    if (joined) this.count(call.upstream, policy, 'joined', usage, null);
    const value = (await promise) as T;
    if (!joined) this.count(call.upstream, policy, 'miss', usage, null);
    // Nothing stored: an answer built on it cannot be judged later.
    if (usage) usage.sources = null;
    return value;
  }

  /**
   * A write went out (whatever its outcome): the answers tagged `tags` are
   * dropped for every scope, here and on every instance. A write to a
   * project's hooks may have turned its webhooks off: the project no longer
   * counts as webhook-fed until its next event (or registration).
   */
  afterWrite(upstream: string, path: PathSegments, tags: readonly string[]): void {
    const hookOf = upstream === 'gitlab' && path[0] === 'projects' && path[2] === 'hooks' && /^\d{1,16}$/.test(String(path[1])) ? Number(path[1]) : undefined;
    this.send({ from: this.id, at: this.now(), drop: [...tags], upstream, cause: 'mutation', ...(hookOf === undefined ? {} : { unfed: hookOf }) });
  }

  /**
   * A job or pipeline webhook of `projectId` arrived: its job and pipeline
   * answers are dropped everywhere, and the project counts as webhook-fed
   * for that kind for the quiet window. Call before the event is published,
   * so that what its subscribers read next is fresh.
   */
  webhookDelivered(projectId: number, kind: 'job' | 'pipeline'): void {
    const at = this.now();
    const kinds: WebhookKind[] = kind === 'job' ? ['jobs'] : ['pipelines'];
    this.send({
      from: this.id,
      at,
      drop: webhookTags(projectId),
      upstream: 'gitlab',
      cause: 'webhook',
      fed: { projectId, kinds, until: at + this.options.webhookQuietMs },
    });
  }

  /**
   * The drop channel stopped carrying drops for sure (`answering` false:
   * Redis does not answer), or carries them again, every failed one sent
   * since (`lost`: not all could be kept; `missed`: this instance's
   * subscription was cut, so what others sent meanwhile never came).
   * Meanwhile no answer gets the webhook age, and afterwards only one read
   * after the gap. Where drops were lost, every instance counts everything
   * read before as dropped; where this one missed some, it does.
   */
  gap(answering: boolean, lost: boolean, missed: boolean): void {
    this.changes++;
    if (!answering) {
      this.since = Number.POSITIVE_INFINITY;
      return;
    }
    this.since = this.now();
    const floor: CacheMessage = { from: this.id, at: this.now(), floor: true };
    if (lost) this.send(floor);
    else if (missed) this.apply(floor);
  }

  async close(): Promise<void> {
    this.stopListening();
    await this.store.close();
  }

  private send(message: CacheMessage): void {
    this.apply(message);
    this.channel?.publish(CACHE_TOPIC, message);
  }

  private apply(message: CacheMessage): void {
    this.changes++;
    if (message.drop?.length && message.upstream && message.cause) this.options.observer?.invalidation?.(message.upstream, message.cause);
    for (const tag of message.drop ?? []) {
      // Re-inserted, so the map stays ordered by time and pruning stops at the first young one.
      this.drops.delete(tag);
      this.drops.set(tag, { at: message.at, seq: ++this.seq });
    }
    if (message.fed) {
      const marks = this.fed.get(message.fed.projectId) ?? {};
      for (const kind of message.fed.kinds) marks[kind] = message.fed.until;
      // Re-inserted, so the oldest marks go first when the record is full: a project forgotten is only one read plainly.
      this.fed.delete(message.fed.projectId);
      this.fed.set(message.fed.projectId, marks);
      if (this.fed.size > MAX_FED) this.fed.delete(this.fed.keys().next().value as number);
    }
    if (message.unfed !== undefined) this.fed.delete(message.unfed);
    if (message.floor) this.floor = { at: Math.max(this.floor.at, message.at), seq: ++this.seq };
    if (this.drops.size > (this.options.maxDrops ?? MAX_DROPS)) this.prune();
  }

  /** Forgets drops no fresh entry can predate, then, past the bound, the oldest of the rest into the floor. */
  private prune(): void {
    const horizon = this.now() - Math.max(this.options.maxAgeMs, this.options.webhookMaxAgeMs) - CLOCK_SKEW_MS;
    const bound = this.options.maxDrops ?? MAX_DROPS;
    for (const [tag, drop] of this.drops) {
      if (drop.at >= horizon && this.drops.size <= bound) break;
      this.drops.delete(tag);
      if (drop.at >= horizon) this.floor = { at: Math.max(this.floor.at, drop.at), seq: Math.max(this.floor.seq, drop.seq) };
    }
  }

  /** Whether a tag was dropped after this instance's step `started` (exact: steps are never equal). */
  private droppedAfter(tags: readonly string[], started: number): boolean {
    if (started <= this.floor.seq) return true;
    for (const tag of tags) {
      const drop = this.drops.get(tag);
      if (drop !== undefined && drop.seq > started) return true;
    }
    return false;
  }

  /**
   * Whether an entry was dropped since it was read: by this instance's steps
   * for its own entries, by the clock for another's (a drop in the same
   * millisecond counts: the order is not known).
   */
  private droppedSince(entry: AnswerSource): boolean {
    if (entry.origin === this.id) return this.droppedAfter(entry.tags, entry.seq);
    if (entry.storedAt <= this.floor.at) return true;
    for (const tag of entry.tags) {
      const drop = this.drops.get(tag);
      if (drop !== undefined && drop.at >= entry.storedAt) return true;
    }
    return false;
  }

  private isFed(webhook: NonNullable<CachePolicy['webhook']>, now: number): boolean {
    const until = this.fed.get(webhook.projectId)?.[webhook.kind];
    return until !== undefined && until > now;
  }

  /** The longest an entry of this policy may serve anyone. */
  private maxAge(entry: Pick<CacheEntry, 'status' | 'storedAt'>, webhook: CachePolicy['webhook'], now: number): number {
    const { maxAgeMs, webhookMaxAgeMs } = this.options;
    if (entry.status === 200 && webhook && entry.storedAt >= this.since && this.isFed(webhook, now)) return Math.max(maxAgeMs, webhookMaxAgeMs);
    return maxAgeMs;
  }

  /**
   * The count of changes (besides the clock) to what freshness rests on: a
   * judgement of servedUntil holds, until the time it gave, while this
   * count stands.
   */
  get generation(): number {
    return this.changes;
  }

  /**
   * Until when `source` would be served to a caller who accepts `callerAge`
   * (every drop since, every age, the webhook age only while the project's
   * webhooks reach the gateway), if nothing is dropped or marked meanwhile
   * (generation): minus infinity where it would not be now.
   */
  servedUntil(source: AnswerSource, callerAge: number | undefined): number {
    const now = this.now();
    if (!this.fresh(source, source.webhook, callerAge, now)) return Number.NEGATIVE_INFINITY;
    const { webhook } = source;
    const age = this.maxAge(source, webhook, now);
    // The webhook age holds while the project counts as fed: judged again when that ends.
    const fedUntil = webhook && age > this.options.maxAgeMs ? (this.fed.get(webhook.projectId)?.[webhook.kind] ?? now) : Number.POSITIVE_INFINITY;
    return Math.min(source.storedAt + Math.min(age, callerAge ?? Number.POSITIVE_INFINITY), fedUntil);
  }

  /** The least plain age any of `sources` has left, in ms (what a browser may keep: its copy cannot be dropped). */
  plainAgeLeft(sources: readonly AnswerSource[]): number {
    const now = this.now();
    let left = Number.POSITIVE_INFINITY;
    for (const source of sources) left = Math.min(left, this.options.maxAgeMs - (now - source.storedAt));
    return Math.max(0, left);
  }

  /** The longest any answer may be served, webhook age included. */
  get longestAgeMs(): number {
    return Math.max(this.options.maxAgeMs, this.options.webhookMaxAgeMs);
  }

  private fresh(entry: AnswerSource, webhook: CachePolicy['webhook'], callerAge: number | undefined, now = this.now()): boolean {
    const limit = Math.min(this.maxAge(entry, webhook, now), callerAge ?? Number.POSITIVE_INFINITY);
    // Fresh while younger than the limit (RFC 9111: lifetime > age), so no-cache (0) always asks the upstream.
    return now - entry.storedAt < limit && !this.droppedSince(entry);
  }

  private count(
    upstream: string,
    policy: CachePolicy | null,
    outcome: 'hit' | 'miss' | 'revalidated' | 'joined',
    usage: CacheUsage | undefined,
    used: Pick<CacheEntry, 'storedAt'> | null,
  ): void {
    this.options.observer?.lookup?.(upstream, policy?.family ?? 'uncached', outcome, outcome === 'hit' && used ? this.now() - used.storedAt : undefined);
    if (!usage) return;
    if (outcome === 'hit') usage.hits++;
    else if (outcome === 'revalidated') usage.revalidated++;
    else if (outcome === 'joined') usage.joined++;
    else usage.misses++;
    if (used) {
      // What a browser may keep: the plain age left, never the webhook age (its copy cannot be dropped).
      const left = Math.max(0, this.options.maxAgeMs - (this.now() - used.storedAt));
      usage.freshForMs = usage.freshForMs === null ? left : Math.min(usage.freshForMs, left);
    }
  }

  /** The read itself: sent (revalidating a stale entry with an ETag), then stored unless a drop came while it ran. */
  private async fetch(
    call: CacheCall,
    key: string | null,
    policy: CachePolicy | null,
    stale: CacheEntry | null,
    send: (headers: Record<string, string>) => Promise<RawAnswer>,
  ): Promise<RawAnswer> {
    const startedAt = this.now();
    const seq = ++this.seq;
    const etag = stale?.headers.etag;
    const answer = await send(etag ? { 'if-none-match': etag } : {});
    if (answer.status === 304 && stale && etag && key !== null) {
      const renewed: CacheEntry = { ...stale, storedAt: startedAt, origin: this.id, seq };
      const kept = await this.keep(key, renewed, policy as CachePolicy);
      return served(renewed, 'revalidated', kept ? policy : null, call.again);
    }
    if (!policy || key === null || !storable(call.upstream, answer)) return { ...answer, servedBy: 'upstream' };
    const body = policy.sanitize ? policy.sanitize(answer.text) : answer.text;
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = answer.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    const tags = policy.family === 'projects' ? [...policy.tags, ...projectAliases(body)] : policy.tags;
    const entry: CacheEntry = { status: answer.status, headers, body, storedAt: startedAt, tags, origin: this.id, seq };
    const kept = await this.keep(key, entry, policy);
    return { ...answer, text: body, servedBy: 'upstream', ...(kept ? { source: sourceOf(entry, policy, call.again) } : {}) };
  }

  /** Stores `entry`, unless a drop came while it was read; says whether it did. */
  private async keep(key: string, entry: CacheEntry, policy: CachePolicy): Promise<boolean> {
    // A drop that came while the read ran may describe a change the answer missed.
    if (this.droppedAfter(entry.tags, entry.seq)) return false;
    // Digested only once it is stored: a read a drop keeps out is never looked up by its body.
    entry.digest ??= bodyDigest(entry.body);
    const age = entry.status === 200 && policy.webhook ? Math.max(this.options.maxAgeMs, this.options.webhookMaxAgeMs) : this.options.maxAgeMs;
    // An entry with an ETag outlives its age, so that a later read can revalidate it rather than read it whole.
    await this.store.set(key, entry, entry.headers.etag ? age * REVALIDATE_FOR : age);
    return true;
  }

  /** The credential scope, upstream and URL of a call: in memory only (it holds the credentials); what is stored is keyed by its digest. */
  private scopeText(call: CacheCall): string {
    const credentials =
      call.identity === undefined
        ? Object.entries(call.credentials ?? {})
            .map(([name, value]) => `${name.toLowerCase()}=${value}`)
            .sort()
        : [`identity=${call.identity}`];
    return `${call.upstream}\n${credentials.join('\n')}\n${call.url}`;
  }

  private digest(scopeText: string): string {
    return createHmac('sha256', this.options.keySecret).update(scopeText).digest('base64url');
  }
}

function served(entry: CacheEntry, servedBy: 'hit' | 'revalidated', policy: CachePolicy | null, again: SourceCall | undefined): RawAnswer {
  const answer: RawAnswer = { status: entry.status, headers: entry.headers, text: entry.body, bytes: 0, servedBy };
  if (policy) answer.source = sourceOf(entry, policy, again);
  if (entry.parsed) answer.parsed = entry.parsed;
  return answer;
}

function sourceOf(entry: CacheEntry, policy: CachePolicy, again: SourceCall | undefined): AnswerSource {
  const { status, storedAt, tags, origin, seq } = entry;
  const source: AnswerSource = policy.webhook ? { status, storedAt, tags, origin, seq, webhook: policy.webhook } : { status, storedAt, tags, origin, seq };
  // A version only where the answer built on it may be checked again (its caller keeps sources, and can send the read again).
  if (entry.digest === undefined || !again) return source;
  // The pagination headers are part of what a caller reads (a page's total, its next page); the ETag only restates the body.
  let version = `${status} ${entry.digest}`;
  for (const name in entry.headers) if (name !== 'etag') version += `\n${name}: ${entry.headers[name]}`;
  source.version = version;
  source.call = again;
  return source;
}

/** Notes what a request's answer was built from (and the claiming field's, if any): a stored answer, or something that cannot be judged later. */
function track(call: CacheCall, answer: RawAnswer): void {
  const usage = call.scope?.cache;
  if (!usage?.sources) return;
  if (!answer.source) {
    usage.sources = null;
    return;
  }
  usage.sources.push(answer.source);
  call.claim?.sources.push(answer.source);
}

/**
 * Whether an answer may be stored: a 200 with a body, or GitLab's 404 for
 * a lookup (not its 404 for an unknown Sudo user, which fails every read).
 * Hubzilla reports failures in 200 bodies (empty, `false`, success false):
 * only a JSON array or object that is not such a failure is kept.
 */
function storable(upstream: string, answer: RawAnswer): boolean {
  if (upstream === 'gitlab') {
    if (answer.status === 404) return !/"404 User with ID or username/.test(answer.text);
    return answer.status === 200 && answer.text.length > 0;
  }
  if (answer.status !== 200) return false;
  const text = answer.text.trimStart();
  if (!text.startsWith('[') && !text.startsWith('{')) return false;
  return !/^\{\s*"success"\s*:\s*false/.test(text);
}
