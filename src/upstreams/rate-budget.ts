/**
 * A budget of GitLab calls per credential scope and minute, kept so that
 * GitLab never has to refuse one: every call the gateway sends is counted
 * (rate-limiter-flexible; in Redis with REDIS_URL, so every instance and
 * worker draws on one budget) against the limit it knows, configured
 * (GITLAB_RATE_LIMIT_PER_MINUTE) or learned from GitLab's `RateLimit-Limit`
 * whenever an answer carries it (the lower of the two).
 *
 * - Windows are the epoch's minutes, as GitLab's Rack::Attack counts them
 *   (lib/gitlab/rack_attack.rb: `retry_after = period - (now % period)`), so
 *   a budget spent at the end of one of them is whole again when GitLab's is.
 * - Work for no request (pollers, log watches) yields first: it may not
 *   spend the last RATE_LIMIT_RESERVE share of a window, which is kept for
 *   callers waiting on an answer.
 * - A call the budget refuses fails at once with UPSTREAM_RATE_LIMITED and
 *   the seconds to the window's end.
 * - Redis out of reach or slow: the count goes on in this process from
 *   Redis's last (minute-counter.ts), never a failed call for it.
 * Budgets belong to whom GitLab counts (identities.ts): a user, whatever
 * token or header; anonymous callers and tokens GitLab has not accepted
 * share one, as GitLab counts them by the gateway's IP.
 */
import type { Redis } from 'ioredis';
import { MinuteCounter } from './minute-counter.js';
import { ANONYMOUS } from './identities.js';

export interface RateBudgetOptions {
  /** GITLAB_RATE_LIMIT_PER_MINUTE; null: only what GitLab's headers say. */
  perMinute: number | null;
  /** RATE_LIMIT_RESERVE: the share of a window background work may not spend. */
  reserve: number;
  /** ANONYMOUS_SHARE_PER_ADDRESS: the share of the anonymous budget the callers of one client address may spend. */
  anonymousShare?: number;
  /** A client for the budget in Redis, shared by the fleet; none keeps it in this process. */
  redis?: Redis | null;
  /** The clock windows are cut by (ms since the epoch); tests move it. */
  now?: () => number;
}

/** GitLab limits callers with a token per user and the rest per IP, each with a limit of its own. */
type Caller = 'authenticated' | 'unauthenticated';

export class RateBudget {
  private readonly learned = new Map<Caller, number>();
  private readonly counter: MinuteCounter;

  constructor(private readonly options: RateBudgetOptions) {
    this.counter = new MinuteCounter({ prefix: 'duograph:budget', redis: options.redis, now: options.now });
  }

  /** Whether any limit is known: without one, nothing is counted. */
  get active(): boolean {
    return this.options.perMinute !== null || this.learned.size > 0;
  }

  /** The calls per minute in force for such callers: the lower of the configured and the learned limit; null while neither is known. */
  limit(caller: Caller = 'authenticated'): number | null {
    const { perMinute } = this.options;
    const learned = this.learned.get(caller) ?? null;
    if (perMinute === null) return learned;
    return learned === null ? perMinute : Math.min(perMinute, learned);
  }

  /**
   * Takes one call from the budget of `who` (identities.ts: ANONYMOUS, or
   * the user GitLab counts it against). Resolves 0 when it may go out, else
   * the milliseconds until the minute's end: negative when what is spent is
   * the share of the caller's `address`. `background` work stops at the
   * reserve.
   */
  async take(who: string, background: boolean, address?: string): Promise<number> {
    const points = this.limit(who === ANONYMOUS ? 'unauthenticated' : 'authenticated');
    if (points === null) return 0;
    if (background) {
      const { used, leftMs } = await this.counter.get(who);
      if (used >= Math.floor(points * (1 - this.options.reserve))) return leftMs;
    }
    // One address may spend only its share of the anonymous budget: invented tokens from one client cannot shut out all.
    const share = who === ANONYMOUS && address !== undefined ? `${ANONYMOUS}@${address}` : null;
    if (share !== null) {
      const { used, leftMs, window } = await this.counter.add(share);
      if (used > Math.max(1, Math.floor(points * (this.options.anonymousShare ?? 1)))) {
        await this.counter.giveBack(share, 1, window);
        return -leftMs;
      }
    }
    const { used, leftMs, window } = await this.counter.add(who);
    if (used <= points) return 0;
    // Not sent, so not counted.
    await Promise.all([this.counter.giveBack(who, 1, window), share === null ? null : this.counter.giveBack(share, 1, window)]);
    return leftMs;
  }

  /** A call taken from one budget turned out to count against another (a lookup of a token GitLab accepted: its user's, not the address's). */
  async move(from: string, to: string, address?: string): Promise<void> {
    if (from === to || !this.active) return;
    const share = from === ANONYMOUS && address !== undefined ? this.counter.giveBack(`${ANONYMOUS}@${address}`) : null;
    await Promise.all([this.counter.giveBack(from), this.counter.add(to), share]);
  }

  /**
   * Learns from an answer's `RateLimit-*` headers (sent with a 429, or on
   * every answer where the instance turns that on): GitLab's limit, and its
   * count of `who`'s calls this minute (`RateLimit-Observed`), which the
   * budget takes when it is higher than its own, so calls the same user made
   * elsewhere (another tool, another gateway) are counted too.
   */
  observe(headers: Readonly<Record<string, string | undefined>>, whoOf: () => string | null): void {
    const limit = Number(headers['ratelimit-limit']);
    const name = headers['ratelimit-name'] ?? '';
    if (!Number.isSafeInteger(limit) || limit <= 0 || !name.startsWith('throttle_')) return;
    const anonymous = name.startsWith('throttle_unauthenticated');
    this.learned.set(anonymous ? 'unauthenticated' : 'authenticated', limit);
    const observed = Number(headers['ratelimit-observed']);
    const reset = Number(headers['ratelimit-reset']);
    // A lookup's answer counts a user the budget does not know yet (who is still the anonymous one): nothing to raise.
    const who = anonymous ? ANONYMOUS : whoOf();
    const key = anonymous ? ANONYMOUS : who === ANONYMOUS ? null : who;
    // Only a count of GitLab's current window: RateLimit-Reset is its end, in seconds since the epoch.
    if (key === null || key === 'refused' || !Number.isSafeInteger(observed) || !Number.isSafeInteger(reset)) return;
    void this.counter.raise(key, observed, reset / 60 - 1);
  }
}
