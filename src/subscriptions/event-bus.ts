/**
 * The pub/sub the subscription sources publish to, and webhook dedup.
 *
 * Two event targets: `local` (always in memory) carries what only this
 * instance needs (poll results: every instance with subscribers runs its
 * own poller), and `shared` carries webhook events, which must reach every
 * instance. With REDIS_URL, `shared` is Redis (@graphql-yoga/redis-event-target
 * over two ioredis connections, one of them in subscriber mode) and dedup
 * keys live in Redis too, so a redelivery that lands on another instance is
 * still caught. Without it, both are in memory.
 *
 * Listener counts are tracked per topic, so tests and the benchmark can
 * assert that no topic (and so no Redis channel subscription) outlives its
 * last subscriber.
 */
import { setMaxListeners } from 'node:events';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { CACHE_TOPIC } from '../upstreams/answer-cache.js';
import { RATE_TOPIC } from '../upstreams/rate-gate.js';
import type { Lease } from './pollers.js';

export type Listener<T> = (payload: T) => void;

/** One pub/sub channel family: publish JSON-safe payloads, listen per topic. */
export interface Channel {
  publish(topic: string, payload: unknown): void;
  /** Starts listening at once; the returned function stops (idempotent). */
  listen<T>(topic: string, listener: Listener<T>): () => void;
}

export interface EventBus {
  /** In-process only. */
  readonly local: Channel;
  /** Every instance (Redis when configured). */
  readonly shared: Channel;
  /** 'memory' or 'redis'. */
  readonly kind: 'memory' | 'redis';
  /** Topics of subscriptions with at least one listener, over both channels; with Redis, shared ones are channel subscriptions. The answer cache's and the rate gate's topics, listened to for the process's life, are not counted. */
  activeTopics(): number;
  /**
   * Records delivery keys; resolves false when any of them was seen before
   * (a redelivery). Keys expire after a day, the longest GitLab keeps
   * retrying or offering "Resend".
   */
  firstDelivery(keys: readonly string[]): Promise<boolean>;
  /** Shares pollers across processes (Redis, or a group's primary); absent when this process is alone. */
  readonly lease?: Lease;
  /** Resolves once the bus can carry events; rejects when Redis cannot be reached in time. */
  ready(): Promise<void>;
  /**
   * Hears when the shared channel stops carrying messages for sure (Redis
   * does not answer, a publish failed) and when it does again, with every
   * message that failed sent since; `lost` then says whether some could
   * not be kept to send, `missed` whether this instance's subscription was
   * cut meanwhile (what others published then never reached it). Only a
   * bus over Redis has gaps.
   */
  onGap?(listener: (answering: boolean, lost: boolean, missed: boolean) => void): () => void;
  /** Whether Redis answers now (the bus over Redis only). */
  answering?(): boolean;
  close(): Promise<void>;
}

export interface MinimalEventTarget {
  addEventListener(type: string, listener: (event: Event) => void): void;
  removeEventListener(type: string, listener: (event: Event) => void): void;
  dispatchEvent(event: Event): boolean;
}

const DEDUP_TTL_S = 24 * 60 * 60;
const DEDUP_MAX_KEYS = 100_000;

export class CountedChannel implements Channel {
  readonly topics = new Map<string, number>();

  /** Topics listened to, but for the answer cache's and the rate gate's, which live as long as the process. */
  get active(): number {
    return this.topics.size - (this.topics.has(CACHE_TOPIC) ? 1 : 0) - (this.topics.has(RATE_TOPIC) ? 1 : 0);
  }

  constructor(private readonly target: MinimalEventTarget) {}

  publish(topic: string, payload: unknown): void {
    this.target.dispatchEvent(new CustomEvent(topic, { detail: payload }));
  }

  listen<T>(topic: string, listener: Listener<T>): () => void {
    const handler = (event: Event) => listener((event as CustomEvent<T>).detail);
    this.target.addEventListener(topic, handler);
    this.topics.set(topic, (this.topics.get(topic) ?? 0) + 1);
    let listening = true;
    return () => {
      if (!listening) return;
      listening = false;
      this.target.removeEventListener(topic, handler);
      const left = (this.topics.get(topic) ?? 1) - 1;
      if (left > 0) this.topics.set(topic, left);
      else this.topics.delete(topic);
    };
  }
}

/** An in-memory target: thousands of subscribers of one project are expected, not a leak. */
export function memoryTarget(): EventTarget {
  const target = new EventTarget();
  setMaxListeners(0, target);
  return target;
}

/** Seen-keys set with expiry, bounded: the oldest keys go first when full. */
export class MemoryDedup {
  private readonly seen = new Map<string, number>();

  check(keys: readonly string[], now = Date.now()): boolean {
    let fresh = true;
    for (const key of keys) {
      const expires = this.seen.get(key);
      if (expires !== undefined && expires > now) fresh = false;
    }
    for (const key of keys) {
      this.seen.delete(key);
      this.seen.set(key, now + DEDUP_TTL_S * 1000);
    }
    for (const [key, expires] of this.seen) {
      if (this.seen.size <= DEDUP_MAX_KEYS && expires > now) break;
      this.seen.delete(key);
    }
    return fresh;
  }
}

export function createMemoryEventBus(): EventBus {
  const local = new CountedChannel(memoryTarget());
  const shared = new CountedChannel(memoryTarget());
  const dedup = new MemoryDedup();
  return {
    local,
    shared,
    kind: 'memory',
    activeTopics: () => local.active + shared.active,
    firstDelivery: async (keys) => dedup.check(keys),
    ready: async () => {},
    close: async () => {},
  };
}

/**
 * The bus over Redis. Connects in the background (ioredis reconnects by
 * itself and queues commands meanwhile); `ready()` rejects when Redis is not
 * reachable within `connectTimeoutMs`, so start-up fails loudly instead of
 * silently losing cross-instance events.
 */
/** Renews a lease only if this process still holds it. */
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
/** Deletes a lease only if this process holds it. */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** Leases in Redis: `SET NX PX` to take, a checked PEXPIRE to renew, a checked DEL to give up; the value names this process. */
function redisLease(client: Redis, ttlMs: number): Lease {
  const me = randomUUID();
  const keyOf = (key: string) => `duograph:lease:${key}`;
  return {
    ttlMs,
    hold: async (key) => {
      if ((await client.set(keyOf(key), me, 'PX', ttlMs, 'NX')) === 'OK') return true;
      return (await client.eval(RENEW, 1, keyOf(key), me, String(ttlMs))) === 1;
    },
    release: async (key) => {
      await client.eval(RELEASE, 1, keyOf(key), me);
    },
  };
}

/** How often the bus asks Redis whether it answers, and how long an answer may take. */
const HEARTBEAT_MS = 1_000;
/** The longest a command of a request's, a webhook's or a lease's path waits for Redis. */
const COMMAND_TIMEOUT_MS = 2_000;
/** Messages kept to send again once Redis answers; past it the oldest go, and the gap says so. */
const MAX_UNSENT = 10_000;

/** `promise`, or a rejection once `ms` passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export function createRedisEventBus(url: string, onError: (message: string) => void = () => {}, connectTimeoutMs = 10_000, leaseTtlMs = 30_000): EventBus {
  const options = { maxRetriesPerRequest: 3, connectionName: 'duograph' };
  // Every command of this client is on some request's, webhook's or lease's path: none may hang while Redis is paused.
  const publishClient = new Redis(url, { ...options, commandTimeout: COMMAND_TIMEOUT_MS });
  const subscribeClient = new Redis(url, options);
  let lastError: string | null = null;
  // Until Redis has been reached once, a failure is the start-up's one error line (ready() rejects with it), not a log line.
  let reached = false;
  for (const client of [publishClient, subscribeClient]) {
    // Report each distinct failure once, never the URL (it may hold a password).
    client.on('error', (error: Error) => {
      if (error.message === lastError) return;
      const first = lastError === null;
      lastError = error.message;
      if (reached) onError(`redis: ${error.message}`);
      // At start, the first failure is said at once, not only when the wait ends.
      else if (first) onError(`redis: not reached yet (${error.message}); trying for up to ${connectTimeoutMs} ms; check REDIS_URL`);
    });
  }
  const whenReady = (client: Redis) => (client.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => client.once('ready', () => resolve())));
  let readiness: Promise<void> | null = null;
  const local = new CountedChannel(memoryTarget());
  // The event target leaves each publish's promise unheard: with Redis away past ioredis's retries it would reject
  // unhandled and end the process. A publish that fails is reported; the caller's request goes on.
  // A message that failed is sent again once Redis answers, so no other instance misses a drop or an event for good.
  const unsent: [string, string][] = [];
  let lost = false;
  let missed = false;
  let answering = true;
  const gapListeners = new Set<(answering: boolean, lost: boolean, missed: boolean) => void>();
  const setAnswering = (now: boolean) => {
    if (now === answering) return;
    answering = now;
    const wasLost = now && lost;
    const wasMissed = now && missed;
    if (now) {
      lost = false;
      missed = false;
    }
    for (const listener of gapListeners) listener(now, wasLost, wasMissed);
  };
  const publisher = {
    publish: (channel: string, message: string) =>
      publishClient.publish(channel, message).catch((error: unknown) => {
        if (reached) onError(`redis: publish failed, to be sent again: ${error instanceof Error ? error.message : 'unknown error'}`);
        unsent.push([channel, message]);
        if (unsent.length > MAX_UNSENT) {
          unsent.shift();
          lost = true;
        }
        setAnswering(false);
        return 0;
      }),
  } as unknown as Redis;
  // Both connections must answer (a paused Redis keeps its sockets open and says nothing), then what failed goes out again, in order.
  let beating = false;
  const heartbeat = setInterval(() => {
    if (!reached || beating) return;
    beating = true;
    void (async () => {
      try {
        await within(Promise.all([subscribeClient.ping(), publishClient.ping()]), HEARTBEAT_MS);
        while (unsent.length > 0) {
          const [channel, message] = unsent[0] as [string, string];
          await within(publishClient.publish(channel, message), COMMAND_TIMEOUT_MS);
          unsent.shift();
        }
        setAnswering(true);
      } catch {
        setAnswering(false);
      } finally {
        beating = false;
      }
    })();
  }, HEARTBEAT_MS);
  heartbeat.unref();
  // Messages published while the subscriber was away never reach it.
  subscribeClient.on('close', () => {
    if (!reached) return;
    missed = true;
    setAnswering(false);
  });
  const shared = new CountedChannel(createRedisEventTarget({ publishClient: publisher, subscribeClient }) as MinimalEventTarget);
  return {
    local,
    shared,
    kind: 'redis',
    lease: redisLease(publishClient, leaseTtlMs),
    activeTopics: () => local.active + shared.active,
    firstDelivery: async (keys) => {
      const results = await Promise.all(keys.map((key) => publishClient.set(`duograph:webhook-delivery:${key}`, '1', 'EX', DEDUP_TTL_S, 'NX')));
      return results.every((result) => result === 'OK');
    },
    ready: () => {
      readiness ??= new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`Redis (REDIS_URL) not reachable within ${connectTimeoutMs} ms${lastError ? `: ${lastError}` : ''}`)),
          connectTimeoutMs,
        );
        void Promise.all([whenReady(publishClient), whenReady(subscribeClient)]).then(() => {
          reached = true;
          clearTimeout(timer);
          resolve();
        });
      });
      return readiness;
    },
    onGap: (listener) => {
      gapListeners.add(listener);
      return () => gapListeners.delete(listener);
    },
    answering: () => answering,
    close: async () => {
      clearInterval(heartbeat);
      // quit() waits for a connection that may never come: only a ready client gets the polite goodbye.
      await Promise.allSettled([subscribeClient, publishClient].map((client) => (client.status === 'ready' ? client.quit() : client.disconnect())));
      subscribeClient.disconnect();
      publishClient.disconnect();
    },
  };
}
