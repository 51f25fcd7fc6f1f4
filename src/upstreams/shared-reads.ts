/**
 * Reads in flight, shared: a GET that is already on its way for the same
 * key (credential scope, upstream, URL) is joined instead of sent again,
 * whichever request, subscription or poller asks. The shared call runs on a
 * signal of its own, cancelled only when every waiter has gone; a waiter that
 * goes away leaves at once with its own cancellation.
 */
import { DeadlineSignal, onAbort } from './resilience.js';

interface SharedRead<T> {
  /** When the call began, as the `stamp` clock reads: a change announced after this makes it unfit to join. */
  readonly started: number;
  /** The call's own signal: an EventEmitter, as a deadline's is (resilience.ts), since every GET has one and listeners on an EventTarget cost more. */
  readonly signal: DeadlineSignal;
  readonly promise: Promise<T>;
  waiters: number;
}

export interface ReadStart {
  /** The shared call's own signal: aborted when its last waiter leaves. */
  signal: DeadlineSignal;
  /** Lets the call learn of each waiter that joins it (for its trace span's links). */
  onJoin(listener: (joiner: unknown) => void): void;
}

export class SharedReads<T> {
  private readonly reads = new Map<string, SharedRead<T> & { joinListeners: ((joiner: unknown) => void)[] }>();

  /** `stamp`: what a read's start is marked with, on the scale changes are ordered by (the cache's steps). */
  constructor(private readonly stamp: () => number) {}

  /** Reads in flight now. */
  get size(): number {
    return this.reads.size;
  }

  /**
   * Joins the read in flight under `key` when `joinable(started)` says it
   * may, else starts one with `start`. `joined` tells which; `joiner` is
   * handed to the running call's join listeners. `cancelled()` is the error a
   * waiter whose `signal` aborts leaves with.
   */
  run(
    key: string,
    options: {
      signal: AbortSignal | undefined;
      joinable: (started: number) => boolean;
      joiner?: unknown;
      cancelled: () => Error;
      start: (read: ReadStart) => Promise<T>;
    },
  ): { promise: Promise<T>; joined: boolean } {
    const { signal } = options;
    if (signal?.aborted) return { promise: Promise.reject(options.cancelled()), joined: false };
    const existing = this.reads.get(key);
    // A read its last waiter abandoned is being cancelled: a new caller starts its own.
    const joined = existing !== undefined && !existing.signal.aborted && options.joinable(existing.started);
    let read = existing;
    if (joined && existing) {
      for (const listener of existing.joinListeners) listener(options.joiner);
    } else {
      const signal = new DeadlineSignal();
      const joinListeners: ((joiner: unknown) => void)[] = [];
      const started = options.start({ signal, onJoin: (listener) => joinListeners.push(listener) });
      const fresh = { started: this.stamp(), signal, promise: started, waiters: 0, joinListeners };
      // Settled whether or not anyone still waits: a call abandoned by all must not leave an unhandled rejection.
      started
        .catch(() => {})
        .finally(() => {
          if (this.reads.get(key) === fresh) this.reads.delete(key);
        });
      // A newer read replaces one made unfit by a change; the older one still answers its own waiters.
      this.reads.set(key, fresh);
      read = fresh;
    }
    return { promise: this.wait(read as SharedRead<T>, signal, options.cancelled), joined };
  }

  private wait(read: SharedRead<T>, signal: AbortSignal | undefined, cancelled: () => Error): Promise<T> {
    read.waiters++;
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const leave = () => {
        read.waiters--;
        if (read.waiters === 0) read.signal.abort(new DOMException('This operation was aborted', 'AbortError'));
      };
      const abandon = () => {
        if (done) return;
        done = true;
        leave();
        reject(cancelled());
      };
      const unlink = signal ? onAbort(signal, abandon) : undefined;
      read.promise.then(
        (value) => {
          if (done) return;
          done = true;
          read.waiters--;
          unlink?.();
          resolve(value);
        },
        (error: unknown) => {
          if (done) return;
          done = true;
          read.waiters--;
          unlink?.();
          reject(error);
        },
      );
    });
  }
}
