/**
 * Counts per key and minute of the clock (in Redis with a client, so a
 * fleet counts once; rate-limiter-flexible's counter there), as GitLab's
 * Rack::Attack cuts its windows (lib/gitlab/rack_attack.rb: `retry_after =
 * period - (now % period)`). A limit is applied to what it counts by its
 * users, so a limit may change without losing the count.
 *
 * When Redis does not answer, a count goes on from the last one Redis gave
 * this process, plus what the process counted since. A count that started
 * afresh in this process alone (rate-limiter-flexible's insurance limiter)
 * would let each instance spend what the fleet had left, and the fleet's
 * count in Redis would never learn of those calls. What was counted while
 * Redis was away (a command never sent) is added there with its next
 * answer; a command that timed out is not sent again, as Redis runs it when
 * it catches up (a paused or overloaded Redis): sent twice, the fleet would
 * count calls it never made and refuse callers with budget left.
 */
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

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
  /** Counted here while Redis was away, not yet added there. */
  owed: number;
}

/** Where counts are kept: each step one atomic change, resolving with the count after it. */
interface Counts {
  get(key: string, window: number): Promise<number>;
  add(key: string, window: number, n: number): Promise<number>;
  /** Raises the count to `count` when it is lower. */
  raise(key: string, window: number, count: number): Promise<number>;
  reward(key: string, window: number, n: number): Promise<void>;
}

/** A step that never left this process (Redis away): to be made again. Any other failure is of unknown fate. */
class Unsent extends Error {}

export class MinuteCounter {
  private readonly counts: Counts;
  private readonly local = new Map<string, LocalCount>();
  private readonly now: () => number;

  constructor(options: { prefix: string; redis?: Redis | null; now?: () => number }) {
    this.now = options.now ?? Date.now;
    this.counts = options.redis ? new RedisCounts(options.redis, options.prefix) : new MemoryCounts();
  }

  /** What `key` counted this minute. */
  async get(key: string): Promise<MinuteCount> {
    const { window, leftMs } = this.minute();
    const mine = this.mine(key, window);
    if (mine.owed > 0) return this.add(key, 0);
    try {
      mine.used = await this.counts.get(key, window);
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
      mine.used = await this.counts.add(key, window, n + owed);
    } catch (error) {
      if (error instanceof Unsent) mine.owed += owed + n;
      mine.used += n;
    }
    return { used: mine.used, leftMs, window };
  }

  /**
   * Raises `key`'s count in `window` to `count` when it is lower (what
   * another counter saw: GitLab's own), in one step: raises made at once,
   * here or in other instances, end at the highest, not at their sum.
   */
  async raise(key: string, count: number, window: number): Promise<void> {
    if (window !== this.minute().window) return;
    const mine = this.mine(key, window);
    // Counted already (almost always, as every call is counted before it goes): nothing to ask Redis.
    if (mine.used >= count) return;
    // GitLab's count holds the calls still owed: added after the raise, they would count twice.
    if (mine.owed > 0) await this.add(key, 0);
    mine.used = Math.max(mine.used, count);
    try {
      mine.used = await this.counts.raise(key, window, count);
    } catch {
      // GitLab says its count again with its next answer.
    }
  }

  /** Takes back `n` counted for `key` in `window` (this minute by default): what was counted but did not happen. A minute past is past. */
  async giveBack(key: string, n = 1, window = this.minute().window): Promise<void> {
    if (window !== this.minute().window) return;
    const mine = this.mine(key, window);
    mine.used = Math.max(0, mine.used - n);
    try {
      await this.counts.reward(key, window, n);
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

/** Counts of one process: the minute's in a map, the last minute's kept for a clock a test moves back. */
class MemoryCounts implements Counts {
  private readonly windows = new Map<number, Map<string, number>>();

  async get(key: string, window: number): Promise<number> {
    return this.of(window).get(key) ?? 0;
  }

  async add(key: string, window: number, n: number): Promise<number> {
    const counts = this.of(window);
    const used = (counts.get(key) ?? 0) + n;
    counts.set(key, used);
    return used;
  }

  async raise(key: string, window: number, count: number): Promise<number> {
    const counts = this.of(window);
    const used = Math.max(counts.get(key) ?? 0, count);
    counts.set(key, used);
    return used;
  }

  async reward(key: string, window: number, n: number): Promise<void> {
    const counts = this.of(window);
    counts.set(key, Math.max(0, (counts.get(key) ?? 0) - n));
  }

  private of(window: number): Map<string, number> {
    let counts = this.windows.get(window);
    if (counts === undefined) {
      for (const old of this.windows.keys()) if (old < window - 1) this.windows.delete(old);
      counts = new Map();
      this.windows.set(window, counts);
    }
    return counts;
  }
}

/**
 * Raises a count to ARGV[1] when it is lower, keeping the key's expiry
 * (ARGV[2] seconds when it had none): rate-limiter-flexible only adds, and a
 * read then an add lets two raises at once add twice.
 */
const RAISE_LUA = `local used = tonumber(redis.call('get', KEYS[1]) or '0')
local count = tonumber(ARGV[1])
if used >= count then return used end
local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 then redis.call('set', KEYS[1], count, 'PX', ttl) else redis.call('set', KEYS[1], count, 'EX', ARGV[2]) end
return count`;

type RaisingClient = Redis & { duographRaise(key: string, count: number, ttlS: number): Promise<number> };

/** Counts of the fleet, one Redis key per key and minute (`<prefix>:<key>:<minute>`). */
class RedisCounts implements Counts {
  private readonly limiter: RateLimiterRedis;
  private readonly client: RaisingClient;

  constructor(client: Redis, prefix: string) {
    // Keys carry their minute, so each lives one minute and a little more.
    this.limiter = new RateLimiterRedis({ points: Number.MAX_SAFE_INTEGER, duration: WINDOW_S * 2, keyPrefix: prefix, storeClient: client });
    if (!('duographRaise' in client)) client.defineCommand('duographRaise', { numberOfKeys: 1, lua: RAISE_LUA });
    this.client = client as RaisingClient;
  }

  async get(key: string, window: number): Promise<number> {
    this.ready();
    return (await this.limiter.get(`${key}:${window}`))?.consumedPoints ?? 0;
  }

  async add(key: string, window: number, n: number): Promise<number> {
    this.ready();
    return (await this.limiter.consume(`${key}:${window}`, n)).consumedPoints;
  }

  async raise(key: string, window: number, count: number): Promise<number> {
    this.ready();
    return Number(await this.client.duographRaise(this.limiter.getKey(`${key}:${window}`), count, WINDOW_S * 2));
  }

  async reward(key: string, window: number, n: number): Promise<void> {
    this.ready();
    await this.limiter.reward(`${key}:${window}`, n);
  }

  /** A client not ready fails a command unsent (storeClient has no offline queue): said so here, before it is tried. */
  private ready(): void {
    if (this.client.status !== 'ready') throw new Unsent('Redis is away');
  }
}
