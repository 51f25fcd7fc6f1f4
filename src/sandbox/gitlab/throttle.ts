/**
 * GitLab's user and IP rate limits as the sandbox plays them, after
 * lib/gitlab/rack_attack.rb: Rack::Attack counts API requests in fixed
 * 60-second windows (aligned to the epoch), per user for a request with a
 * token (`throttle_authenticated_api`) and per IP without one
 * (`throttle_unauthenticated_api`). Past the limit the answer is 429, text
 * `Retry later\n`, with `Retry-After` (seconds to the window's end) and the
 * `RateLimit-*` headers; the same headers on every answer only where the
 * instance turns that on (`headersOnEveryAnswer`). Every request counts,
 * refused ones too, as Rack::Attack counts before it judges.
 */

export interface ThrottleVerdict {
  /** A 429 to send instead of the answer, or null. */
  refused: { status: 429; headers: Record<string, string>; body: string } | null;
  /** Headers to add to the answer (empty unless `headersOnEveryAnswer`). */
  headers: Record<string, string>;
}

const PERIOD_S = 60;

export class SandboxThrottle {
  private readonly counts = new Map<string, { window: number; count: number }>();

  constructor(
    /** Requests a user (or an IP) may make per minute; 0 turns throttling off. */
    public perMinute: number,
    /** Sandbox time, in ms since the epoch. */
    private readonly now: () => number,
    public headersOnEveryAnswer = false,
  ) {}

  /** Counts one request of `discriminator` (`user:<id>` or an IP) and judges it. */
  check(discriminator: string, authenticated: boolean): ThrottleVerdict {
    if (this.perMinute <= 0) return { refused: null, headers: {} };
    const epoch = Math.floor(this.now() / 1000);
    const window = Math.floor(epoch / PERIOD_S);
    const name = authenticated ? 'throttle_authenticated_api' : 'throttle_unauthenticated_api';
    const key = `${name}:${discriminator}`;
    const seen = this.counts.get(key);
    const count = seen && seen.window === window ? seen.count + 1 : 1;
    this.counts.set(key, { window, count });
    const retryAfter = PERIOD_S - (epoch % PERIOD_S);
    const reset = epoch + retryAfter;
    const headers = {
      'RateLimit-Name': name,
      'RateLimit-Limit': String(this.perMinute),
      'RateLimit-Observed': String(count),
      'RateLimit-Remaining': String(Math.max(0, this.perMinute - count)),
      'RateLimit-Reset': String(reset),
      'RateLimit-ResetTime': new Date(reset * 1000).toUTCString(),
    };
    if (count > this.perMinute) {
      return {
        refused: { status: 429, headers: { 'Content-Type': 'text/plain', ...headers, 'Retry-After': String(retryAfter) }, body: 'Retry later\n' },
        headers: {},
      };
    }
    return { refused: null, headers: this.headersOnEveryAnswer ? headers : {} };
  }
}
