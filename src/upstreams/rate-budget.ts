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
 * - Redis out of reach: a budget of this process only (the insurance
 *   limiter), never a failed call for it.
 * Callers without a credential share one budget, as GitLab counts them by IP.
 */
import type { Redis } from 'ioredis';
import { MinuteCounter } from './minute-counter.js';
import { credentialDigest } from './rate-gate.js';

export interface RateBudgetOptions {
  /** GITLAB_RATE_LIMIT_PER_MINUTE; null: only what GitLab's headers say. */
  perMinute: number | null;
  /** RATE_LIMIT_RESERVE: the share of a window background work may not spend. */
  reserve: number;
  /** A client for the budget in Redis, shared by the fleet; none keeps it in this process. */
  redis?: Redis | null;
  /** The clock windows are cut by (ms since the epoch); tests move it. */
  now?: () => number;
}

/** GitLab limits callers with a token per user and the rest per IP, each with a limit of its own. */
type Caller = 'authenticated' | 'unauthenticated';

function callerOf(credentials: Readonly<Record<string, string>> | undefined): Caller {
  return credentials?.authorization || credentials?.['private-token'] || credentials?.['job-token'] ? 'authenticated' : 'unauthenticated';
}

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
   * Takes one call of `upstream` from the scope's budget. Resolves 0 when it
   * may go out, else the milliseconds until the minute's end. `background`
   * work stops at the reserve.
   */
  async take(upstream: string, credentials: Readonly<Record<string, string>> | undefined, background: boolean): Promise<number> {
    if (upstream !== 'gitlab') return 0;
    const points = this.limit(callerOf(credentials));
    if (points === null) return 0;
    const key = credentialDigest(upstream, credentials);
    if (background) {
      const { used, leftMs } = await this.counter.get(key);
      if (used >= Math.floor(points * (1 - this.options.reserve))) return leftMs;
    }
    const { used, leftMs } = await this.counter.add(key);
    if (used <= points) return 0;
    // Not sent, so not counted.
    await this.counter.giveBack(key);
    return leftMs;
  }

  /** Learns GitLab's limit from an answer's `RateLimit-Limit` (sent with a 429, or on every answer where the instance is set to). */
  observe(upstream: string, headers: Readonly<Record<string, string | undefined>>): void {
    if (upstream !== 'gitlab') return;
    const limit = Number(headers['ratelimit-limit']);
    const name = headers['ratelimit-name'] ?? '';
    if (!Number.isSafeInteger(limit) || limit <= 0 || !name.startsWith('throttle_')) return;
    this.learned.set(name.startsWith('throttle_unauthenticated') ? 'unauthenticated' : 'authenticated', limit);
  }
}
