/**
 * Counts per key and minute of the clock (rate-limiter-flexible; in Redis
 * with a client, so a fleet counts once), as GitLab's Rack::Attack cuts its
 * windows (lib/gitlab/rack_attack.rb: `retry_after = period - (now %
 * period)`). A limit is applied to what it counts by its users, so a limit
 * may change without losing the count. With Redis away, each process counts
 * alone (the insurance limiter); a count that fails altogether reads as 0.
 */
import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

const WINDOW_S = 60;

export interface MinuteCount {
  /** Counted in this minute so far. */
  used: number;
  /** Milliseconds to the minute's end. */
  leftMs: number;
  /** The minute counted in (minutes since the epoch), for giving back to the same one. */
  window: number;
}

export class MinuteCounter {
  private readonly counter: RateLimiterAbstract;

  constructor(options: { prefix: string; redis?: Redis | null; now?: () => number }) {
    this.now = options.now ?? Date.now;
    // Keys carry their minute, so each lives one minute and a little more.
    const common = { points: Number.MAX_SAFE_INTEGER, duration: WINDOW_S * 2, keyPrefix: options.prefix };
    const local = new RateLimiterMemory(common);
    this.counter = options.redis ? new RateLimiterRedis({ ...common, storeClient: options.redis, insuranceLimiter: local }) : local;
  }

  private readonly now: () => number;

  /** What `key` counted this minute. */
  async get(key: string): Promise<MinuteCount> {
    const { window, leftMs } = this.minute();
    try {
      return { used: (await this.counter.get(`${key}:${window}`))?.consumedPoints ?? 0, leftMs, window };
    } catch {
      return { used: 0, leftMs, window };
    }
  }

  /** Counts `n` for `key`; resolves with the count after it. */
  async add(key: string, n = 1): Promise<MinuteCount> {
    const { window, leftMs } = this.minute();
    try {
      return { used: (await this.counter.consume(`${key}:${window}`, n)).consumedPoints, leftMs, window };
    } catch {
      return { used: 0, leftMs, window };
    }
  }

  /** Takes back `n` counted for `key` in `window` (this minute by default): what was counted but did not happen. A minute past is past. */
  async giveBack(key: string, n = 1, window = this.minute().window): Promise<void> {
    if (window !== this.minute().window) return;
    try {
      await this.counter.reward(`${key}:${window}`, n);
    } catch {
      // Counted once too often: the safe side.
    }
  }

  private minute(): { window: number; leftMs: number } {
    const now = this.now();
    const window = Math.floor(now / 1000 / WINDOW_S);
    return { window, leftMs: (window + 1) * WINDOW_S * 1000 - now };
  }
}
