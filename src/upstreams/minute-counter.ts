/**
 * Counts per key and minute of the clock (rate-limiter-flexible; in Redis
 * with a client, so a fleet counts once), as GitLab's Rack::Attack cuts its
 * windows (lib/gitlab/rack_attack.rb: `retry_after = period - (now %
 * period)`). A limit is applied to what it counts by its users, so a limit
 * may change without losing the count.
 *
 * When Redis does not answer (away, or slower than its command timeout), a
 * count goes on from the last one Redis gave this process, plus what the
 * process counted since, and what it counted meanwhile is added in Redis
 * with its next answer. A count that started afresh in this process alone
 * (rate-limiter-flexible's insurance limiter) would let each instance spend
 * what the fleet had left, and the fleet's count in Redis would never learn
 * of those calls: the 429s the fleet budget test drew under load.
 */
import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

const WINDOW_S = 60;
/** Keys this process remembers its own counts of at most; past it, those of past minutes go. */
const MAX_LOCAL = 10_000;

export interface MinuteCount {
  /** Counted in this minute so far. */
  used: number;
  /** Milliseconds to the minute's end. */
  leftMs: number;
  /** The minute counted in (minutes since the epoch), for giving back to the same one. */
  window: number;
}

/** What this process knows of a key's count in one minute. */
interface LocalCount {
  window: number;
  /** The count as last known: Redis's last answer plus what this process counted since. */
  used: number;
  /** Counted here while Redis did not answer, not yet added there. */
  owed: number;
}

export class MinuteCounter {
  private readonly counter: RateLimiterAbstract;
  private readonly local = new Map<string, LocalCount>();
  private readonly now: () => number;

  constructor(options: { prefix: string; redis?: Redis | null; now?: () => number }) {
    this.now = options.now ?? Date.now;
    // Keys carry their minute, so each lives one minute and a little more.
    const common = { points: Number.MAX_SAFE_INTEGER, duration: WINDOW_S * 2, keyPrefix: options.prefix };
    this.counter = options.redis ? new RateLimiterRedis({ ...common, storeClient: options.redis }) : new RateLimiterMemory(common);
  }

  /** What `key` counted this minute. */
  async get(key: string): Promise<MinuteCount> {
    const { window, leftMs } = this.minute();
    const mine = this.mine(key, window);
    if (mine.owed > 0) return this.add(key, 0);
    try {
      mine.used = (await this.counter.get(`${key}:${window}`))?.consumedPoints ?? 0;
    } catch {
      // Redis did not answer: the last count known stands.
    }
    return { used: mine.used, leftMs, window };
  }

  /** Counts `n` for `key`; resolves with the count after it. */
  async add(key: string, n = 1): Promise<MinuteCount> {
    const { window, leftMs } = this.minute();
    const mine = this.mine(key, window);
    const owed = mine.owed;
    mine.owed = 0;
    try {
      mine.used = (await this.counter.consume(`${key}:${window}`, n + owed)).consumedPoints;
    } catch {
      mine.owed += owed + n;
      mine.used += n;
    }
    return { used: mine.used, leftMs, window };
  }

  /** Raises `key`'s count in `window` to `count` when it is lower (what another counter saw: GitLab's own). */
  async raise(key: string, count: number, window: number): Promise<void> {
    if (window !== this.minute().window) return;
    const { used } = await this.get(key);
    if (used < count) await this.add(key, count - used);
  }

  /** Takes back `n` counted for `key` in `window` (this minute by default): what was counted but did not happen. A minute past is past. */
  async giveBack(key: string, n = 1, window = this.minute().window): Promise<void> {
    if (window !== this.minute().window) return;
    const mine = this.mine(key, window);
    mine.used = Math.max(0, mine.used - n);
    try {
      await this.counter.reward(`${key}:${window}`, n);
    } catch {
      // Counted once too often in Redis: the safe side.
    }
  }

  private mine(key: string, window: number): LocalCount {
    let mine = this.local.get(key);
    if (mine?.window !== window) {
      mine = { window, used: 0, owed: 0 };
      this.local.delete(key);
      this.local.set(key, mine);
      if (this.local.size > MAX_LOCAL) {
        for (const [old, count] of this.local) if (count.window !== window) this.local.delete(old);
        // All of this minute: the longest unused goes (its count reads from Redis again).
        if (this.local.size > MAX_LOCAL) this.local.delete(this.local.keys().next().value as string);
      }
    }
    return mine;
  }

  private minute(): { window: number; leftMs: number } {
    const now = this.now();
    const window = Math.floor(now / 1000 / WINDOW_S);
    return { window, leftMs: (window + 1) * WINDOW_S * 1000 - now };
  }
}
