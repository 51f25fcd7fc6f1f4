/**
 * Shared pollers: one per key (project + credential scope + what is polled),
 * however many subscribers share it, ref-counted. Each runs one timer at a
 * time and never overlaps its own polls. The interval starts at
 * `intervalMs`, grows by half when a poll sees no change, doubles when the
 * upstream fails, is capped at `maxIntervalMs`, and drops back to
 * `intervalMs` on a change or when a new subscriber joins. The last release
 * clears the timer and forgets the poller, so nothing outlives its
 * subscribers; `activePollers` and `activeTimers` let tests assert it.
 * A poll refused by a rate limit waits for the limit's reset before the next.
 */
import { UpstreamError } from '../errors.js';

/** What one poll found. 'skipped' (nothing asked upstream) backs off like 'unchanged'. */
export type PollOutcome = 'changed' | 'unchanged' | 'skipped';

export interface PollTask {
  poll(): Promise<PollOutcome>;
  /** The least time before the next poll, whatever the interval (a read's cost may call for more). */
  minIntervalMs?(): number;
  /** Called once when the last subscriber leaves. */
  stop?(): void;
}

/**
 * Who polls a key across processes: with several workers or instances, the
 * one holding the key's lease polls and publishes for all; the others
 * follow, trying to take the lease twice per period so that a holder that
 * died is replaced within one.
 */
export interface Lease {
  /** Takes or renews the lease of `key`; true when this process holds it now. */
  hold(key: string): Promise<boolean>;
  /** Gives the lease up, if this process holds it. */
  release(key: string): Promise<void>;
  /** How long a lease lasts without renewal, in ms. */
  readonly ttlMs: number;
}

export interface PollerOptions {
  intervalMs: number;
  maxIntervalMs: number;
  /** Shares polls across processes (leased pollers only); none: every process polls for its own subscribers. */
  lease?: Lease;
  /** Reports a failed poll (message only, never a credential); the poller backs off and goes on. */
  onError?: (key: string, error: unknown) => void;
}

/** Back-off factors: gentle when idle, steep when the upstream is failing. */
const IDLE_FACTOR = 1.5;
const FAILURE_FACTOR = 2;

class Poller {
  refs = 1;
  private interval: number;
  private timer: NodeJS.Timeout | null = null;
  private dueAt = 0;
  /** Until when a rate limit holds the next poll back: a nudge does not bring it forward. */
  private heldUntil = 0;
  private polling = false;
  private stopped = false;
  /** Polls run to their end, skipped ones included: tests wait on it to see what a number of polls did. */
  finished = 0;
  /** While this process holds the lease: the timer that renews it between polls. */
  private renewal: NodeJS.Timeout | null = null;

  constructor(
    readonly key: string,
    private readonly task: PollTask,
    private readonly options: PollerOptions,
    private readonly timers: { count: number },
    private readonly lease: Lease | null,
  ) {
    this.interval = options.intervalMs;
    // A task that has just read (a job log's first whole read) may ask for more than the interval already.
    this.schedule(Math.max(options.intervalMs, task.minIntervalMs?.() ?? 0));
  }

  /** Whether this process may poll now: always without a lease, else when it holds (or just took) the lease. */
  private async mayPoll(): Promise<boolean> {
    if (!this.lease) return true;
    let held: boolean;
    try {
      held = await this.lease.hold(this.key);
    } catch {
      // The lease store is out of reach: polling twice beats not polling at all.
      held = true;
    }
    if (held && !this.renewal && !this.stopped) {
      const lease = this.lease;
      this.renewal = setInterval(() => void lease.hold(this.key).catch(() => undefined), Math.max(50, Math.floor(lease.ttlMs / 3)));
      this.renewal.unref();
    }
    if (!held) this.stopRenewal();
    return held;
  }

  private stopRenewal(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = null;
  }

  /** A new subscriber: poll at the base pace again (not at once: its own first read is fresh). */
  nudge(): void {
    this.interval = this.options.intervalMs;
    // Never sooner than the task's own cost allows: a new subscriber of a big job log does not buy an extra whole read.
    const least = Math.max(this.interval, this.task.minIntervalMs?.() ?? 0);
    if (this.timer && this.dueAt - Date.now() > least && Date.now() >= this.heldUntil) this.schedule(least);
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    if (this.renewal) void this.lease?.release(this.key).catch(() => undefined);
    this.stopRenewal();
    this.task.stop?.();
  }

  private schedule(ms: number): void {
    this.clearTimer();
    if (this.stopped) return;
    this.dueAt = Date.now() + ms;
    this.timers.count += 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timers.count -= 1;
      void this.run();
    }, ms);
    // A poller never keeps the process alive on its own.
    this.timer.unref();
  }

  private clearTimer(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.timers.count -= 1;
  }

  private async run(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    if (!(await this.mayPoll())) {
      // Another process polls and publishes: try for the lease twice per period, in case it died.
      this.polling = false;
      if (!this.stopped) this.schedule(Math.min(this.options.intervalMs, Math.floor((this.lease?.ttlMs ?? 0) / 2)) || this.options.intervalMs);
      return;
    }
    let factor = IDLE_FACTOR;
    let waitMs = 0;
    try {
      const outcome = await this.task.poll();
      if (outcome === 'changed') factor = 0;
    } catch (error) {
      factor = FAILURE_FACTOR;
      // The budget's reserve, or GitLab's limit: yield until the minute turns, whatever the back-off says.
      if (error instanceof UpstreamError && error.code === 'UPSTREAM_RATE_LIMITED') waitMs = (error.upstream.retryAfterSeconds ?? 0) * 1000;
      if (!this.stopped) this.options.onError?.(this.key, error);
    } finally {
      this.polling = false;
      this.finished += 1;
    }
    if (this.stopped) return;
    this.interval = factor === 0 ? this.options.intervalMs : Math.min(this.options.maxIntervalMs, Math.round(this.interval * factor));
    this.heldUntil = Date.now() + waitMs;
    this.schedule(Math.max(this.interval, waitMs, this.task.minIntervalMs?.() ?? 0));
  }

  /** Milliseconds until the next poll, for tests of yielding to a rate limit. */
  get dueInMs(): number {
    return this.dueAt - Date.now();
  }

  /** The interval the next poll waits, for tests of the back-off. */
  get currentIntervalMs(): number {
    return this.interval;
  }
}

export class PollerRegistry {
  private readonly pollers = new Map<string, Poller>();
  private readonly timers = { count: 0 };

  constructor(private readonly options: PollerOptions) {}

  /**
   * Joins the poller of `key`, creating it with `create()` when there is
   * none. Returns the release function (idempotent): the last release stops it.
   * A `leased` poller polls only while this process holds the key's lease
   * (when the registry has one); its results must go where every process hears them.
   */
  acquire(key: string, create: () => PollTask, options: { leased?: boolean } = {}): () => void {
    let poller = this.pollers.get(key);
    if (poller) {
      poller.refs += 1;
      poller.nudge();
    } else {
      poller = new Poller(key, create(), this.options, this.timers, options.leased ? (this.options.lease ?? null) : null);
      this.pollers.set(key, poller);
    }
    const joined = poller;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      joined.refs -= 1;
      if (joined.refs > 0) return;
      joined.stop();
      if (this.pollers.get(key) === joined) this.pollers.delete(key);
    };
  }

  /** A new subscriber of the poller of `key` (one that shares a topic already holding it): poll at the base pace again. */
  nudge(key: string): void {
    this.pollers.get(key)?.nudge();
  }

  /** Pollers with at least one subscriber. */
  get activePollers(): number {
    return this.pollers.size;
  }

  /** Poll timers currently set (at most one per poller). */
  get activeTimers(): number {
    return this.timers.count;
  }

  /** Subscribers sharing the poller of `key` (0 when there is none). */
  subscribersOf(key: string): number {
    return this.pollers.get(key)?.refs ?? 0;
  }

  /** Milliseconds until the next poll of `key`; undefined when there is none. */
  dueIn(key: string): number | undefined {
    return this.pollers.get(key)?.dueInMs;
  }

  /** Polls the poller of `key` has run to their end (0 when there is none). */
  pollsOf(key: string): number {
    return this.pollers.get(key)?.finished ?? 0;
  }

  /** Current interval of the poller of `key`, in ms; undefined when there is none. */
  intervalOf(key: string): number | undefined {
    return this.pollers.get(key)?.currentIntervalMs;
  }

  /** Stops every poller (server shutdown). */
  stopAll(): void {
    for (const poller of this.pollers.values()) poller.stop();
    this.pollers.clear();
  }
}
