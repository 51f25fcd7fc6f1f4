/**
 * Where cached upstream answers live: in this process (lru-cache, bounded in
 * bytes, least recently used out first) or in Redis (ioredis), shared by a
 * fleet, each entry expiring there by itself. A store never fails a call:
 * Redis out of reach reads as a miss and skips the write.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

/** One stored answer: what the upstream said, when the read that got it began, and what drops it. */
export interface CacheEntry {
  /** 200, or 404 for a lookup of something that does not exist. */
  status: number;
  /** The headers a caller reads (pagination, ETag); never a cookie or a credential. */
  headers: Record<string, string>;
  /** The body as text, secrets taken out. */
  body: string;
  /** The body's SHA-256 (base64url), taken once when it was read: the store pools bodies by it, and warm answers tell a body read again unchanged by it. Entries an older instance left in Redis may lack it. */
  digest?: string;
  /** When the read that got this answer began (ms since the epoch): its age counts from there. */
  storedAt: number;
  /** Tags a change drops it by (cache-policy.ts). */
  tags: string[];
  /** The instance that read it, and that instance's step when the read began: its own drops are ordered by steps, not by the clock. */
  origin: string;
  seq: number;
  /** In this process only (never written to Redis): the body's parsed form, shared by every reader of it. */
  parsed?: ParsedBody;
}

/**
 * A stored body's parsed form, made by its first reader and handed to every
 * later one: a hit is not parsed again. Deep-frozen, since readers of every
 * scope share it; the bytes it takes are counted once it exists.
 */
export class ParsedBody {
  private made = false;
  private value: unknown;

  constructor(private readonly onMade: (value: unknown) => void = () => {}) {}

  /** The parsed value: `parse` runs the first time only. */
  get<T>(parse: () => T): T {
    if (!this.made) {
      this.value = deepFreeze(parse());
      this.made = true;
      this.onMade(this.value);
    }
    return this.value as T;
  }
}

/** A body's SHA-256, as entries carry it. */
export function bodyDigest(body: string): string {
  return createHash('sha256').update(body).digest('base64url');
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  /** The entry under `key`, or null (also when the store cannot be reached). */
  get(key: string): Promise<CacheEntry | null>;
  /** Stores `entry` for at most `ttlMs`. */
  set(key: string, entry: CacheEntry, ttlMs: number): Promise<void>;
  /** Bytes held, where the store knows (memory). */
  bytes(): number;
  close(): Promise<void>;
}

/** Bytes a string holds in V8: one per character while every one fits in Latin-1, else two. */
function stringBytes(text: string): number {
  return /[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length;
}

/** Bytes an entry holds besides its body: its headers and tags, and a little for the objects. */
function metaBytes(entry: CacheEntry): number {
  let size = 128;
  for (const key in entry.headers) size += key.length + (entry.headers[key]?.length ?? 0);
  for (const tag of entry.tags) size += tag.length;
  return size;
}

interface PooledBody {
  text: string;
  bytes: number;
  holders: number;
  parsed: ParsedBody;
}

/** What a body's parsed form is counted as, per byte of its text: V8's objects of parsed JSON take about twice the text. */
const PARSED_BYTES_PER_TEXT_BYTE = 2;

/**
 * Entries in this process, bounded by `maxBytes`, least recently used out
 * first; `onEvict` hears of each one pushed out for room. A body several
 * scopes read alike (a public project's job page, read by twenty users) is
 * held once and counted once: entries point at it by its SHA-256, and it
 * goes with its last entry. What a caller gets is still only what its own
 * entry names.
 */
export class MemoryStore implements CacheStore {
  readonly kind = 'memory';
  private readonly lru: LRUCache<string, CacheEntry & { digest: string }>;
  private readonly bodies = new Map<string, PooledBody>();
  private bodyBytes = 0;

  /** `now`: the clock expiry is measured by (the cache's), default Date.now. */
  constructor(
    private readonly maxBytes: number,
    onEvict: () => void = () => {},
    now: () => number = Date.now,
  ) {
    this.lru = new LRUCache<string, CacheEntry & { digest: string }>({
      perf: { now },
      // Read the clock on every look-up: a cached "now" would let an entry outlive its age within the same tick.
      ttlResolution: 0,
      // Room is judged on bodies and entries together (set); the LRU's own count is the entries'.
      maxSize: Number.MAX_SAFE_INTEGER,
      sizeCalculation: metaBytes,
      ttlAutopurge: false,
      dispose: (value, _key, reason) => {
        this.release(value.digest);
        if (reason === 'evict') onEvict();
      },
    });
  }

  async get(key: string): Promise<CacheEntry | null> {
    const stored = this.lru.get(key);
    if (!stored) return null;
    const parsed = this.bodies.get(stored.digest)?.parsed;
    return parsed ? { ...stored, parsed } : { ...stored };
  }

  async set(key: string, entry: CacheEntry, ttlMs: number): Promise<void> {
    const digest = entry.digest ?? bodyDigest(entry.body);
    let body = this.bodies.get(digest);
    if (!body) {
      const bytes = stringBytes(entry.body);
      // One answer may not take more than a quarter of the room: a huge page would push out everything else.
      if (bytes > this.maxBytes / 4) return;
      const pooled: PooledBody = {
        text: entry.body,
        bytes,
        holders: 0,
        parsed: new ParsedBody(() => {
          // Counted while the body is still held; made room for like any new entry.
          if (this.bodies.get(digest) !== pooled) return;
          const extra = bytes * PARSED_BYTES_PER_TEXT_BYTE;
          pooled.bytes += extra;
          this.bodyBytes += extra;
          this.makeRoom();
        }),
      };
      body = pooled;
      this.bodies.set(digest, body);
      this.bodyBytes += bytes;
    }
    body.holders++;
    const { parsed: _parsed, ...kept } = entry;
    this.lru.set(key, { ...kept, body: body.text, digest }, { ttl: ttlMs });
    this.makeRoom();
  }

  private makeRoom(): void {
    while (this.bytes() > this.maxBytes && this.lru.size > 0) this.lru.pop();
  }

  bytes(): number {
    return this.bodyBytes + this.lru.calculatedSize;
  }

  async close(): Promise<void> {
    this.lru.clear();
  }

  private release(digest: string): void {
    const body = this.bodies.get(digest);
    if (!body || --body.holders > 0) return;
    this.bodies.delete(digest);
    this.bodyBytes -= body.bytes;
  }
}

/**
 * A Redis client for what must never hold a request up: commands fail at
 * once while Redis is away (no offline queue) and after 250 ms at most, and
 * each distinct failure is reported once, never with the URL (it may hold a
 * password). Before Redis was ever reached, the event bus's start-up error
 * says it all.
 */
export function storeClient(url: string, name: string, onError: (message: string) => void): Redis {
  const client = new Redis(url, { connectionName: name, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: REDIS_COMMAND_TIMEOUT_MS });
  let reached = false;
  let lastError = '';
  client.on('error', (error: Error) => {
    if (!reached || error.message === lastError) return;
    lastError = error.message;
    onError(`${name}: ${error.message}`);
  });
  client.on('ready', () => {
    reached = true;
    lastError = '';
  });
  return client;
}

/** How long one Redis command may take before the read counts as a miss. */
const REDIS_COMMAND_TIMEOUT_MS = 250;

/**
 * Entries in Redis under `duograph:cache:<digest>`, as JSON, with PX expiry,
 * on a `storeClient`: a cache that is down costs a request nothing but the miss.
 * A body's parsed form is kept in this process by the body's digest
 * (bounded in bytes, least recently used out first), so an answer read from
 * Redis again while unchanged is parsed at most once per instance.
 */
export class RedisStore implements CacheStore {
  readonly kind = 'redis';
  private readonly client: Redis;
  private readonly parsed: LRUCache<string, ParsedBody>;

  constructor(url: string, onError: (message: string) => void = () => {}, maxParsedBytes = 64 * 1024 * 1024) {
    this.client = storeClient(url, 'duograph-cache', onError);
    this.parsed = new LRUCache<string, ParsedBody>({ maxSize: Math.max(1, maxParsedBytes) });
  }

  async get(key: string): Promise<CacheEntry | null> {
    let entry: CacheEntry;
    try {
      const text = await this.client.get(`duograph:cache:${key}`);
      if (text === null) return null;
      entry = JSON.parse(text) as CacheEntry;
    } catch {
      return null;
    }
    // An entry an older instance stored has no digest: its readers parse it themselves.
    if (typeof entry.digest !== 'string') return entry;
    let parsed = this.parsed.get(entry.digest);
    if (!parsed) {
      parsed = new ParsedBody();
      // Counted before it is made, as the parsed form it will be (about twice the text).
      this.parsed.set(entry.digest, parsed, { size: Math.max(1, stringBytes(entry.body) * PARSED_BYTES_PER_TEXT_BYTE) });
    }
    return { ...entry, parsed };
  }

  async set(key: string, entry: CacheEntry, ttlMs: number): Promise<void> {
    try {
      const { parsed: _parsed, ...kept } = entry;
      await this.client.set(`duograph:cache:${key}`, JSON.stringify(kept), 'PX', Math.max(1, Math.ceil(ttlMs)));
    } catch {
      // Not stored: the next read asks the upstream again.
    }
  }

  bytes(): number {
    return 0;
  }

  async close(): Promise<void> {
    if (this.client.status === 'ready') await this.client.quit().catch(() => {});
    this.client.disconnect();
  }
}
