/**
 * What GitLab's rate limits refuse, remembered: after a 429, no call of the
 * same credential scope goes out until its `Retry-After` has passed (or its
 * `RateLimit-Reset`), in this instance and, through the shared pub/sub, in
 * every other; each such call fails at once with UPSTREAM_RATE_LIMITED and
 * the seconds left. Sending them anyway would only add to the count GitLab
 * keeps against the user (or block the token).
 *
 * GitLab's user and IP throttles (Rack::Attack, lib/gitlab/rack_attack.rb)
 * name themselves in `RateLimit-Name` (`throttle_authenticated_api`, …) and
 * cover every route of the user: they close the whole scope. A 429 without
 * such a name is an endpoint's own limit (`check_rate_limit!`, e.g. the job
 * list's): it closes that route template only, so the rest goes on.
 * Callers without a credential share one scope, as GitLab counts them by IP.
 */
import { createHash } from 'node:crypto';
import { parseRetryAfter } from './resilience.js';

/** How long a 429 that says neither Retry-After nor RateLimit-Reset closes its scope: GitLab's limits count per minute. */
const DEFAULT_CLOSED_MS = 60_000;
/** Longest closure believed: a Retry-After beyond it is an upstream's mistake, not a plan. */
const MAX_CLOSED_MS = 3_600_000;

/** Closures kept before the expired ones are swept out. */
const MAX_CLOSURES = 10_000;

/** The shared-channel topic closures travel on. */
export const RATE_TOPIC = 'duograph:rate';

/** The pub/sub closures reach the other instances on (the event bus's shared channel). */
export interface RateChannel {
  publish(topic: string, payload: unknown): void;
  listen<T>(topic: string, listener: (payload: T) => void): () => void;
}

interface Closure {
  /** `upstream|scope|route`, route `*` for the whole scope. */
  key: string;
  /** Until when (ms since the epoch). */
  until: number;
}

/**
 * The scope GitLab counts a call against, as a digest that names no token and
 * is the same on every instance: its credential headers, Sudo aside (GitLab
 * counts the token's own user).
 */
export function credentialDigest(upstream: string, credentials: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(credentials ?? {})
    .filter(([name]) => name.toLowerCase() !== 'sudo')
    .map(([name, value]) => `${name.toLowerCase()}=${value}`)
    .sort();
  return createHash('sha256')
    .update(`${upstream}\n${entries.join('\n')}`)
    .digest('base64url')
    .slice(0, 32);
}

export class RateGate {
  private readonly closed = new Map<string, number>();
  private channel: RateChannel | null = null;
  private stopListening: () => void = () => {};

  constructor(
    private readonly now: () => number = Date.now,
    /** Whom GitLab counts credentials against, when known (identities.ts): a 429 for one of a user's tokens holds back all of them. */
    private readonly identityOf: (credentials: Readonly<Record<string, string>> | undefined) => string | null = () => null,
  ) {}

  /** The scope a closure covers: the GitLab user where known, else the credentials. */
  private scopeOf(upstream: string, credentials: Readonly<Record<string, string>> | undefined): string {
    const identity = upstream === 'gitlab' ? this.identityOf(credentials) : null;
    return identity?.startsWith('user:') ? identity : credentialDigest(upstream, credentials);
  }

  /** Takes closures from the other instances, and sends them this one's. */
  listen(channel: RateChannel): void {
    this.stopListening();
    this.channel = channel;
    this.stopListening = channel.listen<Closure>(RATE_TOPIC, (closure) => this.close(closure));
  }

  /** Milliseconds until a call of this scope and route may go out; 0 when it may now. */
  closedFor(upstream: string, credentials: Readonly<Record<string, string>> | undefined, route: string): number {
    if (this.closed.size === 0) return 0;
    const scope = this.scopeOf(upstream, credentials);
    const now = this.now();
    let left = 0;
    for (const key of [`${upstream}|${scope}|*`, `${upstream}|${scope}|${route}`]) {
      const until = this.closed.get(key);
      if (until === undefined) continue;
      if (until <= now) this.closed.delete(key);
      else left = Math.max(left, until - now);
    }
    return left;
  }

  /** Learns from an answer: a 429 closes its scope (or its route) until GitLab says calls may come again. */
  observe(
    upstream: string,
    credentials: Readonly<Record<string, string>> | undefined,
    route: string,
    status: number,
    headers: Readonly<Record<string, string | undefined>>,
  ): void {
    if (status !== 429) return;
    const now = this.now();
    const retryAfter = parseRetryAfter(headers['retry-after'], now);
    const reset = Number(headers['ratelimit-reset']);
    const wait = retryAfter ?? (Number.isFinite(reset) && reset > 0 ? reset * 1000 - now : DEFAULT_CLOSED_MS);
    const name = headers['ratelimit-name'] ?? '';
    const closure: Closure = {
      key: `${upstream}|${this.scopeOf(upstream, credentials)}|${name.startsWith('throttle_') ? '*' : route}`,
      until: now + Math.min(Math.max(wait, 0), MAX_CLOSED_MS),
    };
    this.close(closure);
    this.channel?.publish(RATE_TOPIC, closure);
  }

  /** Scopes (or routes) held back now, for the metrics. */
  get closures(): number {
    const now = this.now();
    let open = 0;
    for (const until of this.closed.values()) if (until > now) open++;
    return open;
  }

  /** Stops taking closures from the other instances. */
  stop(): void {
    this.stopListening();
  }

  private close(closure: Closure): void {
    if (typeof closure.key !== 'string' || typeof closure.until !== 'number') return;
    const current = this.closed.get(closure.key) ?? 0;
    if (closure.until > current) this.closed.set(closure.key, closure.until);
    if (this.closed.size > MAX_CLOSURES) {
      const now = this.now();
      for (const [key, until] of this.closed) if (until <= now) this.closed.delete(key);
    }
  }
}
