/**
 * The pieces of the upstream resilience policy that hold state or do
 * arithmetic: a circuit breaker, a concurrency limiter, jittered back-off
 * and Retry-After parsing. Pure Node; `http.ts` composes them around each
 * upstream call and is the only user.
 */
import { EventEmitter } from 'node:events';

/** What the policy allows for one upstream. */
export interface ResiliencePolicy {
  /** Time to open a TCP (and TLS) connection, in ms. */
  connectTimeoutMs: number;
  /** Time from sending a request to its response headers, in ms. */
  headersTimeoutMs: number;
  /** Longest pause between two chunks of a response body, in ms. */
  bodyTimeoutMs: number;
  /** Deadline of one upstream call, attempts, back-off and queueing included, in ms. */
  deadlineMs: number;
  /** Extra attempts of an idempotent call (GET, HEAD) after a connection error, a 429 or a 502/503/504. */
  retries: number;
  /** First back-off step, in ms; each further attempt doubles it, with full jitter. */
  retryBaseMs: number;
  /** Longest wait before a retry, in ms, Retry-After included: a longer Retry-After fails at once. */
  retryMaxDelayMs: number;
  /** Consecutive failed calls that open the breaker; 0 turns the breaker off. */
  breakerThreshold: number;
  /** How long an open breaker fails calls fast before it lets one probe through, in ms. */
  breakerResetMs: number;
  /** Calls in flight at once to this upstream; more wait their turn within their deadline. */
  maxConcurrency: number;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * A consecutive-failure circuit breaker. `threshold` failures in a row open
 * it; while open every call fails fast without touching the network; after
 * `resetMs` one probe call goes through (half-open): its success closes the
 * breaker, its failure opens it for another `resetMs`.
 */
export class CircuitBreaker {
  private failures = 0;
  private openedAt = 0;
  private probing = false;
  private current: BreakerState = 'closed';

  constructor(
    private readonly threshold: number,
    private readonly resetMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): BreakerState {
    if (this.current === 'open' && this.now() - this.openedAt >= this.resetMs) return 'half-open';
    return this.current;
  }

  /** Milliseconds until an open breaker lets a probe through (0 when it would now). */
  get retryInMs(): number {
    return this.current === 'open' ? Math.max(0, this.resetMs - (this.now() - this.openedAt)) : 0;
  }

  /** Whether a call may go out now; a true answer in half-open state reserves the single probe. */
  tryAcquire(): boolean {
    if (this.threshold <= 0) return true;
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.probing) return false;
    this.probing = true;
    return true;
  }

  onSuccess(): void {
    this.failures = 0;
    this.probing = false;
    this.current = 'closed';
  }

  onFailure(): void {
    if (this.threshold <= 0) return;
    this.failures += 1;
    if (this.probing || this.failures >= this.threshold) {
      this.current = 'open';
      this.openedAt = this.now();
    }
    this.probing = false;
  }

  /** A call that ended without telling whether the upstream is healthy (the caller went away). */
  onNeutral(): void {
    this.probing = false;
  }
}

/**
 * A counting semaphore with a FIFO queue; waiting ends early when the signal
 * aborts. Each holder takes a weight (1 for an upstream call; an operation's
 * estimated calls for admission): one above `max` runs alone, one of 0 at once.
 */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly waiting: { weight: number; grant: () => void }[] = [];

  constructor(readonly max: number) {}

  /** The weight held now. */
  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** A release function when `weight` fits now, without waiting (and no one waits before it); null otherwise. */
  tryAcquire(weight = 1): (() => void) | null {
    const taken = Math.min(weight, this.max);
    if (taken <= 0) return NOTHING_HELD;
    if (this.waiting.length > 0 || this.active + taken > this.max) return null;
    this.active += taken;
    return this.releaser(taken);
  }

  /** Resolves with a release function once `weight` fits; rejects with the signal's reason if it aborts first. */
  acquire(signal?: CallSignal, weight = 1): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const free = this.tryAcquire(weight);
    if (free) return Promise.resolve(free);
    const taken = Math.min(weight, this.max);
    return new Promise((resolve, reject) => {
      const entry = {
        weight: taken,
        grant: () => {
          removeListener?.();
          this.active += taken;
          resolve(this.releaser(taken));
        },
      };
      const removeListener = signal
        ? onAbort(signal, () => {
            const index = this.waiting.indexOf(entry);
            if (index >= 0) this.waiting.splice(index, 1);
            reject(signal.reason);
            // A heavy head may have been what held the others back.
            this.grantWaiting();
          })
        : undefined;
      this.waiting.push(entry);
    });
  }

  private releaser(weight: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= weight;
      this.grantWaiting();
    };
  }

  private grantWaiting(): void {
    let head = this.waiting[0];
    while (head && this.active + head.weight <= this.max) {
      this.waiting.shift();
      head.grant();
      head = this.waiting[0];
    }
  }
}

const NOTHING_HELD = (): void => {};

/** Full-jitter exponential back-off: a random wait in [0, min(max, base * 2^attempt)). */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * A Retry-After header in ms: delta-seconds or an HTTP date (RFC 9110
 * 10.2.3); null when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/**
 * What a call can be aborted by: a caller's AbortSignal, or a call's own
 * deadline (an EventEmitter, which undici takes as a signal too).
 */
export type CallSignal = AbortSignal | DeadlineSignal;

/**
 * The abort listeners of each AbortSignal, run by one listener of its own:
 * adding and removing a listener on an EventTarget (a request's signal is
 * one, behind a Proxy) for each of a request's hundred calls cost more than
 * the calls' own work.
 */
const listenersOf = new WeakMap<AbortSignal, Set<() => void>>();

/** Runs `listener` (a function of its own: one added twice is run once) once when `signal` aborts; the returned function removes it. */
export function onAbort(signal: CallSignal, listener: () => void): () => void {
  if (signal instanceof DeadlineSignal) {
    signal.once('abort', listener);
    return () => signal.removeListener('abort', listener);
  }
  let listeners = listenersOf.get(signal);
  if (!listeners) {
    const fresh = new Set<() => void>();
    signal.addEventListener(
      'abort',
      () => {
        for (const each of fresh) each();
        fresh.clear();
      },
      { once: true },
    );
    listenersOf.set(signal, fresh);
    listeners = fresh;
  }
  const own = listeners;
  own.add(listener);
  return () => own.delete(listener);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: CallSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      removeListener?.();
      resolve();
    }, ms);
    const removeListener = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
  });
}

/**
 * The signal of one call's deadline: `aborted` and `reason` as an
 * AbortSignal has them, and an 'abort' event. An EventEmitter rather than an
 * AbortController: a call adds and removes listeners on it (undici, the
 * slot queue), and an EventTarget costs several times more for that.
 */
export class DeadlineSignal extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** A call's deadline: a signal that aborts when `ms` pass or the caller's signal aborts, and its disposal. */
export interface Deadline {
  readonly signal: DeadlineSignal;
  /** Clears the timer and the caller link; call it once the call is over. */
  dispose(): void;
}

// The same reason AbortSignal.timeout gives, which the error mapping reads as UPSTREAM_TIMEOUT.
function abortOnTimeout(signal: DeadlineSignal): void {
  signal.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
}

/**
 * Like `AbortSignal.any([caller, AbortSignal.timeout(ms)])`, but disposable:
 * those keep a timer alive for the whole deadline and tie every call to the
 * caller's signal until GC, which at thousands of calls a second fills the
 * old generation with dead timers and signals. The calls of one caller share
 * one listener on its signal.
 */
export function deadline(ms: number, caller?: CallSignal): Deadline {
  const signal = new DeadlineSignal();
  if (caller?.aborted) {
    signal.abort(caller.reason);
    return { signal, dispose: () => {} };
  }
  const timer = setTimeout(abortOnTimeout, ms, signal);
  const unlink = caller ? onAbort(caller, () => signal.abort(caller.reason)) : undefined;
  return {
    signal,
    dispose: () => {
      clearTimeout(timer);
      unlink?.();
    },
  };
}
